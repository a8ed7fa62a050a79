// The Anthropic side of a reply: content blocks and their stream events in Anthropic's order
// (start, deltas, a thinking block's signature, stop), folded by a client into exactly the
// non-streamed content for every way the output is cut; and the message-level objects (usage,
// stop reasons, errors, SSE framing).
#include "serve/anthropic_stream.h"

#include <gtest/gtest.h>

#include <random>

#include "serve/anthropic_response.h"
#include "serve/parse_pipeline.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// "content_block_start:thinking@0", "content_block_delta:thinking_delta@0", …, a run of equal
// entries (one delta per pushed piece) shown once.
std::vector<std::string> shape(const std::vector<Json>& events) {
  std::vector<std::string> out;
  for (const Json& e : events) {
    std::string s = e["type"];
    if (e.contains("content_block")) s += ":" + e["content_block"]["type"].get<std::string>();
    if (e.contains("delta")) s += ":" + e["delta"]["type"].get<std::string>();
    if (e.contains("index")) s += "@" + std::to_string(e["index"].get<int>());
    if (out.empty() || out.back() != s) out.push_back(s);
  }
  return out;
}

// What a client (the Anthropic SDK's message stream) rebuilds from the block events.
Json fold(const std::vector<Json>& events) {
  Json content = Json::array();
  std::vector<std::string> json_text;
  for (const Json& e : events) {
    const std::string type = e["type"];
    if (type == "content_block_start") {
      EXPECT_EQ(e["index"], content.size());
      content.push_back(e["content_block"]);
      json_text.emplace_back();
    } else if (type == "content_block_delta") {
      Json& block = content[e["index"].get<size_t>()];
      const Json& d = e["delta"];
      if (d["type"] == "text_delta")
        block["text"] = block["text"].get<std::string>() + d["text"].get<std::string>();
      if (d["type"] == "thinking_delta")
        block["thinking"] = block["thinking"].get<std::string>() + d["thinking"].get<std::string>();
      if (d["type"] == "signature_delta") block["signature"] = d["signature"];
      if (d["type"] == "input_json_delta") json_text[e["index"].get<size_t>()] += d["partial_json"];
    } else if (type == "content_block_stop") {
      const size_t i = e["index"];
      if (content[i]["type"] == "tool_use") content[i]["input"] = Json::parse(json_text[i]);
    }
  }
  return content;
}

ParserOptions m3_stream_options() {
  ParserOptions options;
  options.format = ParserFormat::kMinimaxM3;
  options.initial = ReasoningState::kReasoning;
  options.tools = nlohmann::json::parse(R"([{"type":"function","function":{"name":"get_weather",
      "parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}}}}}])");
  options.id_seed = 3;
  return options;
}

// An M3 output with reasoning, an answer and a tool call, and whitespace after the call.
const std::string kOutput =
    "Need the weather.</mm:think>Let me look.\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke "
    "name=\"get_weather\">]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[<days>2]<]"
    "minimax[>[</days>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>\n";

std::vector<Json> run(const std::vector<std::string>& chunks, ContentBlocks& blocks) {
  ParsePipeline parser(m3_stream_options());
  std::vector<Json> events;
  for (const std::string& chunk : chunks) blocks.add(parser.push_text(chunk), events);
  blocks.add(parser.finish(), events);
  blocks.finish(events);
  return events;
}

// One push per byte, as close as text comes to the engine's one push per token: the parsers put
// a tool call in the delta of the push that completes it, so text after the call (here the
// trailing newline) arrives in a later delta. (One push of the whole output would hand the block
// builder that newline and the call in one delta, their order lost.)
std::vector<std::string> bytes(const std::string& text) {
  std::vector<std::string> out;
  for (char c : text) out.emplace_back(1, c);
  return out;
}

Json without_signatures(Json content) {
  for (Json& block : content)
    if (block.contains("signature")) block["signature"] = "";
  return content;
}

TEST(AnthropicStream, ThinkingTextAndToolUseInAnthropicsEventOrder) {
  ContentBlocks blocks;
  const std::vector<Json> events = run(bytes(kOutput), blocks);
  EXPECT_EQ(shape(events), (std::vector<std::string>{
                               "content_block_start:thinking@0",
                               "content_block_delta:thinking_delta@0",
                               "content_block_delta:signature_delta@0",
                               "content_block_stop@0",
                               "content_block_start:text@1",
                               "content_block_delta:text_delta@1",
                               "content_block_stop@1",
                               "content_block_start:tool_use@2",
                               "content_block_delta:input_json_delta@2",
                               "content_block_stop@2",
                           }));
  // Blocks start empty, as Anthropic's do.
  std::vector<Json> starts, signatures;
  for (const Json& e : events) {
    if (e["type"] == "content_block_start") starts.push_back(e["content_block"]);
    if (e.contains("delta") && e["delta"]["type"] == "signature_delta") signatures.push_back(e);
  }
  ASSERT_EQ(starts.size(), 3u);
  ASSERT_EQ(signatures.size(), 1u);
  EXPECT_EQ(starts[0], Json::parse(R"({"type":"thinking","thinking":"","signature":""})"));
  EXPECT_EQ(starts[1], Json::parse(R"({"type":"text","text":""})"));
  const Json& tool = starts[2];
  EXPECT_EQ(tool["name"], "get_weather");
  EXPECT_TRUE(tool["id"].get<std::string>().starts_with("toolu_"));
  EXPECT_EQ(tool["input"], Json::object());

  const Json& content = blocks.content();
  ASSERT_EQ(content.size(), 3u);
  EXPECT_EQ(content[0]["thinking"], "Need the weather.");
  EXPECT_EQ(content[0]["signature"], signatures[0]["delta"]["signature"]);
  EXPECT_FALSE(content[0]["signature"].get<std::string>().empty());
  EXPECT_EQ(content[1], Json::parse(R"({"type":"text","text":"Let me look.\n"})"));
  EXPECT_EQ(content[2]["input"], Json::parse(R"({"city":"Paris","days":2})"));
  EXPECT_TRUE(blocks.has_tool_use());
  EXPECT_EQ(fold(events), content);
}

TEST(AnthropicStream, EveryCuttingFoldsToTheSameContent) {
  ContentBlocks whole;
  run(bytes(kOutput), whole);
  std::mt19937 random(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::string> chunks;
    for (size_t at = 0; at < kOutput.size();) {
      const size_t n = 1 + random() % 12;
      chunks.push_back(kOutput.substr(at, n));
      at += n;
    }
    ContentBlocks blocks;
    const std::vector<Json> events = run(chunks, blocks);
    ASSERT_EQ(fold(events), blocks.content()) << "trial " << trial;
    ASSERT_EQ(without_signatures(blocks.content()), without_signatures(whole.content()))
        << "trial " << trial;
  }
}

TEST(AnthropicStream, WhitespaceOnlyTextOpensNoBlockButLeadsRealText) {
  ContentBlocks blocks;
  std::vector<Json> events;
  ParseDelta space;
  space.content = "\n\n";
  blocks.add(space, events);
  EXPECT_TRUE(events.empty());
  ParseDelta text;
  text.content = "Hi";
  blocks.add(text, events);
  blocks.finish(events);
  EXPECT_EQ(blocks.content(), Json::parse(R"([{"type":"text","text":"\n\nHi"}])"));

  ContentBlocks trailing;
  std::vector<Json> more;
  ParseDelta reasoning;
  reasoning.reasoning = "r";
  trailing.add(reasoning, more);
  trailing.add(space, more);
  trailing.finish(more);
  EXPECT_EQ(trailing.content().size(), 1u);  // only the thinking block
  EXPECT_FALSE(trailing.has_tool_use());
}

TEST(AnthropicResponse, UsageSplitsCachedPromptTokens) {
  EXPECT_EQ(message_usage_json({100, 64, 7}),
            Json::parse(R"({"input_tokens":36,"cache_creation_input_tokens":0,
                            "cache_read_input_tokens":64,"output_tokens":7})"));
}

TEST(AnthropicResponse, StopReasons) {
  EXPECT_EQ(anthropic_stop_reason("stop", "", false), "end_turn");
  EXPECT_EQ(anthropic_stop_reason("stop", "", true), "tool_use");
  EXPECT_EQ(anthropic_stop_reason("stop", "END", false), "stop_sequence");
  EXPECT_EQ(anthropic_stop_reason("length", "", true), "max_tokens");
}

TEST(AnthropicResponse, MessageAndEventsHaveAnthropicsShape) {
  const MessageMeta meta{"msg_1", "tiny"};
  const Json content = Json::parse(R"([{"type":"text","text":"hi"}])");
  const Json message = message_json(meta, content, "stop_sequence", "END", {10, 0, 2});
  std::vector<std::string> keys;
  for (const auto& [key, value] : message.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "type", "role", "model", "content", "stop_reason",
                                            "stop_sequence", "usage"}));
  EXPECT_EQ(message["type"], "message");
  EXPECT_EQ(message["role"], "assistant");
  EXPECT_EQ(message["stop_sequence"], "END");

  const Json start = message_start_event(meta, {10, 4, 0});
  EXPECT_EQ(start["message"]["content"], Json::array());
  EXPECT_TRUE(start["message"]["stop_reason"].is_null());
  EXPECT_TRUE(start["message"]["stop_sequence"].is_null());
  EXPECT_EQ(start["message"]["usage"]["cache_read_input_tokens"], 4);
  const Json delta = message_delta_event("end_turn", "", {10, 4, 3});
  EXPECT_EQ(delta["delta"], Json::parse(R"({"stop_reason":"end_turn","stop_sequence":null})"));
  EXPECT_EQ(delta["usage"]["output_tokens"], 3);
  EXPECT_EQ(anthropic_sse(message_stop_event()),
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
  EXPECT_EQ(anthropic_sse(ping_event()), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  EXPECT_EQ(count_tokens_json(42), Json::parse(R"({"input_tokens":42})"));
}

TEST(AnthropicResponse, ErrorShapeAndTypes) {
  EXPECT_EQ(anthropic_error_json(bad_request("max_tokens: required", "max_tokens")),
            Json::parse(R"({"type":"error","error":{"type":"invalid_request_error",
                            "message":"max_tokens: required"}})"));
  EXPECT_EQ(anthropic_sse(error_event(too_many_requests("queue full"))),
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\","
            "\"message\":\"queue full\"}}\n\n");
  const std::vector<std::pair<int, std::string>> types = {
      {400, "invalid_request_error"}, {401, "authentication_error"},  {403, "permission_error"},
      {404, "not_found_error"},       {405, "invalid_request_error"}, {408, "timeout_error"},
      {413, "request_too_large"},     {429, "rate_limit_error"},      {500, "api_error"},
      {503, "overloaded_error"}};
  for (const auto& [status, type] : types) EXPECT_EQ(anthropic_error_type(status), type) << status;
}

}  // namespace
}  // namespace minimax
