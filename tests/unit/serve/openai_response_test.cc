// Response builders produce exactly the documented shapes: keys in order, nulls where the API
// has nulls, chunks that share id/created/model, and tool-call fragments that concatenate to the
// non-streamed arguments.
#include "serve/openai_response.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "serve/api_error.h"
#include "serve/parse_pipeline.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> keys(const Json& object) {
  std::vector<std::string> out;
  for (const auto& [key, value] : object.items()) out.push_back(key);
  return out;
}
using Keys = std::vector<std::string>;

const ResponseMeta kMeta{"chatcmpl-abc", 1700000000, "minimax-m2"};

TEST(OpenAiErrorBody, ShapeAndTypes) {
  Json body = Json::parse(error_body(bad_request("temperature: too hot", "temperature")));
  EXPECT_EQ(body, Json::parse(R"({"error":{"message":"temperature: too hot",
      "type":"BadRequestError","param":"temperature","code":400}})"));
  EXPECT_EQ(keys(body["error"]), (Keys{"message", "type", "param", "code"}));

  Json no_param = Json::parse(error_body(unauthorized("bad key")));
  EXPECT_TRUE(no_param["error"]["param"].is_null());
  EXPECT_EQ(no_param["error"]["type"], "AuthenticationError");
  EXPECT_EQ(no_param["error"]["code"], 401);
  ApiError missing = model_not_found("gpt-4");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.type, "NotFoundError");
  EXPECT_EQ(missing.param, "model");
  EXPECT_NE(missing.message.find("gpt-4"), std::string::npos);
  EXPECT_EQ(too_many_requests("full").type, "RateLimitError");
  EXPECT_EQ(service_unavailable("busy").status, 503);
  EXPECT_EQ(internal_error("x").type, "InternalServerError");
  EXPECT_EQ(api_error_type(408), "RequestTimeoutError");
  EXPECT_EQ(api_error_type(502), "InternalServerError");

  EXPECT_EQ(sse_error(bad_request("m")).substr(0, 16), "data: {\"error\":{");
  EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
}

TEST(OpenAiResponse, ResponseIdsAreFreshHex) {
  std::string a = new_response_id("chatcmpl-"), b = new_response_id("chatcmpl-");
  EXPECT_NE(a, b);
  ASSERT_EQ(a.size(), 9u + 32u);
  EXPECT_EQ(a.substr(0, 9), "chatcmpl-");
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", 9), std::string::npos);
}

TEST(OpenAiChatStream, RoleContentReasoningFinishAndUsageChunks) {
  Json role = chat_role_chunk(kMeta, 0);
  EXPECT_EQ(keys(role), (Keys{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_TRUE(role["usage"].is_null());
  ASSERT_EQ(role["choices"].size(), 1u);
  EXPECT_EQ(keys(role["choices"][0]), (Keys{"index", "delta", "logprobs", "finish_reason"}));
  EXPECT_EQ(role["choices"][0]["delta"], Json::parse(R"({"role":"assistant","content":""})"));
  EXPECT_TRUE(role["choices"][0]["finish_reason"].is_null());

  ParseDelta delta;
  delta.reasoning = "think";
  delta.content = "say";
  auto chunks = chat_delta_chunks(kMeta, 1, delta);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0]["choices"][0]["index"], 1);
  EXPECT_EQ(chunks[0]["choices"][0]["delta"],
            Json::parse(R"({"reasoning_content":"think","reasoning":"think","content":"say"})"));
  EXPECT_TRUE(chunks[0]["choices"][0]["logprobs"].is_null());
  EXPECT_TRUE(chat_delta_chunks(kMeta, 0, ParseDelta{}).empty());

  Json finish = chat_finish_chunk(kMeta, 0, "length");
  EXPECT_EQ(finish["choices"][0]["delta"], Json::object());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");

  Json usage = chat_usage_chunk(kMeta, Usage{10, 5, 8});
  EXPECT_EQ(usage["choices"], Json::array());
  EXPECT_EQ(usage["usage"], Json::parse(R"({"prompt_tokens":10,"completion_tokens":5,
      "total_tokens":15,"prompt_tokens_details":{"cached_tokens":8}})"));
  EXPECT_EQ(keys(usage["usage"]),
            (Keys{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details"}));

  for (const Json& chunk : {role, chunks[0], finish, usage}) {
    EXPECT_EQ(chunk["id"], kMeta.id);
    EXPECT_EQ(chunk["created"], kMeta.created);
    EXPECT_EQ(chunk["model"], kMeta.model);
  }
  EXPECT_EQ(sse_event(finish), "data: " + json_text(finish) + "\n\n");
}

TEST(OpenAiChatStream, ToolCallFragmentsConcatenateToTheWholeArguments) {
  ParserOptions options;
  options.initial = ReasoningState::kContent;
  options.id_seed = 7;
  options.tools = nlohmann::json::parse(R"([{"type":"function","function":{"name":"get_weather",
      "parameters":{"type":"object","properties":{"city":{"type":"string"},
      "days":{"type":"integer"}}}}}])");
  const std::string output =
      "Checking.<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">"
      "Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n<invoke "
      "name=\"get_weather\">\n<parameter name=\"city\">Oslo</parameter>\n</invoke>\n"
      "</minimax:tool_call>";
  ParseResult whole = parse_output(output, options);
  ASSERT_EQ(whole.tool_calls.size(), 2u);

  // Stream it in small pieces, as a client would receive it, and fold the chunks back.
  ParsePipeline pipeline(options);
  std::vector<Json> chunks;
  auto emit = [&](const ParseDelta& d) {
    for (Json& c : chat_delta_chunks(kMeta, 0, d)) chunks.push_back(std::move(c));
  };
  for (size_t i = 0; i < output.size(); i += 5) emit(pipeline.push_text(output.substr(i, 5)));
  emit(pipeline.finish());

  std::string content;
  std::vector<Json> calls;
  for (const Json& chunk : chunks) {
    const Json& delta = chunk["choices"][0]["delta"];
    if (delta.contains("content")) content += delta["content"].get<std::string>();
    if (!delta.contains("tool_calls")) continue;
    ASSERT_EQ(delta["tool_calls"].size(), 1u);
    const Json& fragment = delta["tool_calls"][0];
    size_t index = fragment["index"].get<size_t>();
    if (fragment.contains("id")) {  // the header: index, id, type, name, empty arguments
      EXPECT_EQ(keys(fragment), (Keys{"index", "id", "type", "function"}));
      EXPECT_EQ(fragment["type"], "function");
      EXPECT_EQ(fragment["function"]["arguments"], "");
      ASSERT_EQ(index, calls.size());
      calls.push_back(fragment);
    } else {
      EXPECT_EQ(keys(fragment), (Keys{"index", "function"}));
      EXPECT_EQ(keys(fragment["function"]), (Keys{"arguments"}));
      ASSERT_LT(index, calls.size());
      std::string& args = calls[index]["function"]["arguments"].get_ref<std::string&>();
      args += fragment["function"]["arguments"].get<std::string>();
    }
  }
  EXPECT_EQ(content, *whole.content);
  ASSERT_EQ(calls.size(), whole.tool_calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls[i]["id"], whole.tool_calls[i].id);
    EXPECT_EQ(calls[i]["function"]["name"], whole.tool_calls[i].name);
    EXPECT_EQ(calls[i]["function"]["arguments"], whole.tool_calls[i].arguments);
  }
  EXPECT_EQ(Json::parse(calls[0]["function"]["arguments"].get<std::string>()),
            Json::parse(R"({"city":"Paris","days":3})"));

  // The non-streamed message carries the same calls.
  ChatChoice choice{0, whole, chat_finish_reason("stop", true), std::nullopt};
  Json response = chat_completion_json(kMeta, std::span(&choice, 1), Usage{3, 4, 0});
  const Json& message = response["choices"][0]["message"];
  EXPECT_EQ(response["choices"][0]["finish_reason"], "tool_calls");
  ASSERT_EQ(message["tool_calls"].size(), 2u);
  EXPECT_EQ(message["tool_calls"][1],
            Json({{"id", whole.tool_calls[1].id},
                  {"type", "function"},
                  {"function",
                   {{"name", "get_weather"}, {"arguments", whole.tool_calls[1].arguments}}}}));
}

TEST(OpenAiChatStream, LogprobsRideOnTheFirstChunkAndAreNeverDropped) {
  std::vector<TokenLogprobs> lp = {{"a", -0.5f, {}}, {"b", -1.5f, {}}};
  ParseDelta calls;
  calls.tool_calls.push_back({0, "call_x", "f", "{}"});
  auto chunks = chat_delta_chunks(kMeta, 0, calls, lp, true);
  ASSERT_EQ(chunks.size(), 2u);  // header, then arguments
  EXPECT_EQ(chunks[0]["choices"][0]["logprobs"]["content"].size(), 2u);
  EXPECT_TRUE(chunks[1]["choices"][0]["logprobs"].is_null());

  auto held = chat_delta_chunks(kMeta, 0, ParseDelta{}, lp, true);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["choices"][0]["delta"], Json::object());
  EXPECT_EQ(held[0]["choices"][0]["logprobs"]["content"][1]["token"], "b");
  EXPECT_TRUE(chat_delta_chunks(kMeta, 0, ParseDelta{}, lp, false).empty());
}

TEST(OpenAiChatResponse, MessageShapeWithNulls) {
  ParseResult message;
  message.content = "Hello";
  ChatChoice choice{0, message, chat_finish_reason("stop", false), std::nullopt};
  Json response = chat_completion_json(kMeta, std::span(&choice, 1), Usage{7, 2, 0});
  EXPECT_EQ(keys(response), (Keys{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(response["object"], "chat.completion");
  const Json& c = response["choices"][0];
  EXPECT_EQ(keys(c), (Keys{"index", "message", "logprobs", "finish_reason"}));
  EXPECT_EQ(keys(c["message"]), (Keys{"role", "content", "reasoning_content", "reasoning"}));
  EXPECT_EQ(c["message"]["role"], "assistant");
  EXPECT_EQ(c["message"]["content"], "Hello");
  EXPECT_TRUE(c["message"]["reasoning_content"].is_null());
  EXPECT_TRUE(c["message"]["reasoning"].is_null());
  EXPECT_TRUE(c["logprobs"].is_null());
  EXPECT_EQ(c["finish_reason"], "stop");
  EXPECT_EQ(response["usage"]["total_tokens"], 9);

  ParseResult thought;
  thought.reasoning = "hmm";
  ChatChoice second{1, thought, "length", std::vector<TokenLogprobs>{{"x", -1.0f, {}}}};
  Json pl = prompt_logprobs_json(std::vector<std::optional<PromptTokenLogprobs>>{std::nullopt});
  Json both = chat_completion_json(kMeta, std::vector<ChatChoice>{choice, second}, Usage{}, pl);
  EXPECT_EQ(both["choices"][1]["index"], 1);
  EXPECT_TRUE(both["choices"][1]["message"]["content"].is_null());
  EXPECT_EQ(both["choices"][1]["message"]["reasoning"], "hmm");
  EXPECT_EQ(both["choices"][1]["logprobs"]["content"][0]["token"], "x");
  EXPECT_EQ(both["prompt_logprobs"], Json::parse("[null]"));
  EXPECT_EQ(chat_finish_reason("length", true), "length");
}

TEST(OpenAiLogprobs, ChatShapeBytesAndInfinity) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<TokenLogprobs> tokens = {
      {"Hi", -0.25f, {{"Hi", -0.25f}, {"Hello", -2.0f}}},
      {"\xC3", -inf, {}},  // the first byte of "é": a token that ends inside a character
  };
  Json lp = chat_logprobs_json(tokens);
  EXPECT_EQ(keys(lp), (Keys{"content"}));
  const Json& first = lp["content"][0];
  EXPECT_EQ(keys(first), (Keys{"token", "logprob", "bytes", "top_logprobs"}));
  EXPECT_EQ(first["bytes"], Json::parse("[72,105]"));
  EXPECT_EQ(first["top_logprobs"][1], Json::parse(R"({"token":"Hello","logprob":-2.0,
      "bytes":[72,101,108,108,111]})"));
  EXPECT_EQ(lp["content"][1]["logprob"], -9999.0);
  EXPECT_EQ(lp["content"][1]["bytes"], Json::parse("[195]"));
  // Serialising replaces the broken character instead of throwing.
  std::string text = json_text(lp);
  EXPECT_NE(text.find("\"token\":\"\xEF\xBF\xBD\""), std::string::npos);
}

TEST(OpenAiLogprobs, LegacyCompletionShape) {
  std::vector<TokenLogprobs> tokens = {
      {"The", 0, {}, false},  // echoed first prompt token: no logprob
      {" caf\xC3\xA9", -1.0f, {{" caf\xC3\xA9", -1.0f}, {" bar", -2.0f}, {" caf\xC3\xA9", -3.0f}}},
      {"!", -0.5f, {}},
  };
  Json lp = completion_logprobs_json(tokens, 4);
  EXPECT_EQ(keys(lp), (Keys{"tokens", "token_logprobs", "top_logprobs", "text_offset"}));
  EXPECT_EQ(lp["tokens"], Json::parse("[\"The\", \" caf\xC3\xA9\", \"!\"]"));
  EXPECT_EQ(lp["token_logprobs"], Json::parse("[null, -1.0, -0.5]"));
  EXPECT_TRUE(lp["top_logprobs"][0].is_null());
  EXPECT_EQ(lp["top_logprobs"][1], Json::parse("{\" caf\xC3\xA9\": -1.0, \" bar\": -2.0}"));
  EXPECT_EQ(lp["top_logprobs"][2], Json::object());
  EXPECT_EQ(lp["text_offset"], Json::parse("[4, 7, 12]"));  // "é" is one character
}

TEST(OpenAiLogprobs, PromptLogprobsListVllmShape) {
  std::vector<std::optional<PromptTokenLogprobs>> positions(3);
  positions[1] = PromptTokenLogprobs{{42, "world", -3.5f, 4},
                                     {{7, "there", -0.1f, 1}, {42, "world", -3.5f, 4}}};
  positions[2] = PromptTokenLogprobs{{9, "!", -0.2f, 1}, {{9, "!", -0.2f, 1}}};
  Json lp = prompt_logprobs_json(positions);
  ASSERT_EQ(lp.size(), 3u);
  EXPECT_TRUE(lp[0].is_null());
  EXPECT_EQ(keys(lp[1]), (Keys{"42", "7"}));  // the actual token first, no duplicate
  EXPECT_EQ(lp[1]["42"], Json::parse(R"({"logprob":-3.5,"rank":4,"decoded_token":"world"})"));
  EXPECT_EQ(lp[1]["7"]["rank"], 1);
  EXPECT_EQ(keys(lp[2]), (Keys{"9"}));
}

TEST(OpenAiCompletionResponse, WholeAndChunks) {
  const ResponseMeta meta{"cmpl-1", 5, "m"};
  CompletionChoice choice{0, "text", "stop", completion_logprobs_json({})};
  Json whole = completion_json(meta, std::span(&choice, 1), Usage{2, 1, 0});
  EXPECT_EQ(keys(whole), (Keys{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(whole["object"], "text_completion");
  EXPECT_EQ(keys(whole["choices"][0]), (Keys{"index", "text", "logprobs", "finish_reason"}));
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(whole["choices"][0]["logprobs"].is_object());
  // vLLM's place for a completion's prompt logprobs: inside the choice, not at the top level.
  Json with_prompt =
      completion_json(meta, std::span(&choice, 1), Usage{2, 1, 0}, Json::parse("[null]"));
  EXPECT_EQ(keys(with_prompt), (Keys{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(keys(with_prompt["choices"][0]),
            (Keys{"index", "text", "logprobs", "finish_reason", "prompt_logprobs"}));
  EXPECT_EQ(with_prompt["choices"][0]["prompt_logprobs"], Json::parse("[null]"));

  Json chunk = completion_chunk(meta, CompletionChoice{1, "te", "", std::nullopt});
  EXPECT_EQ(keys(chunk), (Keys{"id", "object", "created", "model", "choices", "usage"}));
  EXPECT_EQ(chunk["object"], "text_completion");
  EXPECT_TRUE(chunk["usage"].is_null());
  EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
  EXPECT_TRUE(chunk["choices"][0]["logprobs"].is_null());
  EXPECT_EQ(chunk["choices"][0]["index"], 1);
  Json usage = completion_usage_chunk(meta, Usage{2, 1, 0});
  EXPECT_EQ(usage["choices"], Json::array());
  EXPECT_EQ(usage["usage"]["total_tokens"], 3);
}

TEST(OpenAiModels, ListShape) {
  std::vector<ModelCard> cards = {{"minimax-m2", 1700000000, 4096}};
  Json list = models_json(cards);
  EXPECT_EQ(list, Json::parse(R"({"object":"list","data":[{"id":"minimax-m2","object":"model",
      "created":1700000000,"owned_by":"minimax.cpp","max_model_len":4096}]})"));
  EXPECT_EQ(keys(list["data"][0]), (Keys{"id", "object", "created", "owned_by", "max_model_len"}));
}

}  // namespace
}  // namespace minimax
