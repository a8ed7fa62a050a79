// The Responses side of a reply: output items and their stream events in the order the official
// client folds them (item added, content part added, deltas, done events, item done), folded into
// exactly the non-streamed output; the response object, its usage and status, the SSE framing
// with sequence numbers, the error event; and the bounded store behind previous_response_id.
#include "serve/responses_stream.h"

#include <gtest/gtest.h>

#include "serve/parse_pipeline.h"
#include "serve/response_store.h"
#include "serve/responses_response.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// "response.output_item.added:reasoning@0", … a run of equal entries shown once.
std::vector<std::string> shape(const std::vector<Json>& events) {
  std::vector<std::string> out;
  for (const Json& e : events) {
    std::string s = e["type"];
    if (e.contains("item")) s += ":" + e["item"]["type"].get<std::string>();
    if (e.contains("output_index")) s += "@" + std::to_string(e["output_index"].get<int>());
    if (out.empty() || out.back() != s) out.push_back(s);
  }
  return out;
}

// What the official client (openai-node's ResponseStream) rebuilds from the events, plus the
// reasoning text it ignores; each item as output_item.done last sent it must agree.
Json fold(const std::vector<Json>& events) {
  Json output = Json::array();
  for (const Json& e : events) {
    const std::string type = e["type"];
    if (type == "response.output_item.added") {
      EXPECT_EQ(e["output_index"], output.size());
      output.push_back(e["item"]);
    } else if (type == "response.content_part.added") {
      output[e["output_index"].get<size_t>()]["content"].push_back(e["part"]);
    } else if (type == "response.output_text.delta" || type == "response.reasoning_text.delta") {
      Json& part =
          output[e["output_index"].get<size_t>()]["content"][e["content_index"].get<size_t>()];
      part["text"] = part["text"].get<std::string>() + e["delta"].get<std::string>();
    } else if (type == "response.function_call_arguments.delta") {
      Json& item = output[e["output_index"].get<size_t>()];
      item["arguments"] = item["arguments"].get<std::string>() + e["delta"].get<std::string>();
    } else if (type == "response.output_item.done") {
      Json& item = output[e["output_index"].get<size_t>()];
      item["status"] = "completed";
      EXPECT_EQ(item, e["item"]);
    }
  }
  return output;
}

ParserOptions m3_options() {
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

// One push per byte, as close as text comes to the engine's one push per token.
std::vector<Json> run(const std::string& text, ResponseItems& items) {
  ParsePipeline parser(m3_options());
  std::vector<Json> events;
  for (char c : text) items.add(parser.push_text(std::string(1, c)), events);
  items.add(parser.finish(), events);
  items.finish(events);
  return events;
}

TEST(ResponsesStream, ReasoningMessageAndFunctionCallInTheClientsEventOrder) {
  ResponseItems items;
  const std::vector<Json> events = run(kOutput, items);
  EXPECT_EQ(shape(events), (std::vector<std::string>{
                               "response.output_item.added:reasoning@0",
                               "response.content_part.added@0",
                               "response.reasoning_text.delta@0",
                               "response.reasoning_text.done@0",
                               "response.content_part.done@0",
                               "response.output_item.done:reasoning@0",
                               "response.output_item.added:message@1",
                               "response.content_part.added@1",
                               "response.output_text.delta@1",
                               "response.output_text.done@1",
                               "response.content_part.done@1",
                               "response.output_item.done:message@1",
                               "response.output_item.added:function_call@2",
                               "response.function_call_arguments.delta@2",
                               "response.function_call_arguments.done@2",
                               "response.output_item.done:function_call@2",
                           }));
  const Json& output = items.output();
  ASSERT_EQ(output.size(), 3u);
  EXPECT_EQ(output[0]["type"], "reasoning");
  EXPECT_TRUE(output[0]["id"].get<std::string>().starts_with("rs_"));
  EXPECT_EQ(output[0]["summary"], Json::array());
  EXPECT_EQ(output[0]["content"],
            Json::parse(R"([{"type":"reasoning_text","text":"Need the weather."}])"));
  EXPECT_TRUE(output[1]["id"].get<std::string>().starts_with("msg_"));
  EXPECT_EQ(output[1]["role"], "assistant");
  EXPECT_EQ(output[1]["status"], "completed");
  EXPECT_EQ(output[1]["content"], Json::parse(R"([{"type":"output_text","text":"Let me look.\n",
                                                   "annotations":[]}])"));
  const Json& call = output[2];
  EXPECT_EQ(call["type"], "function_call");
  EXPECT_EQ(call["name"], "get_weather");
  EXPECT_TRUE(call["call_id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(call["id"].get<std::string>().substr(3), call["call_id"].get<std::string>().substr(5));
  EXPECT_EQ(Json::parse(call["arguments"].get<std::string>()),
            Json::parse(R"({"city":"Paris","days":2})"));
  EXPECT_TRUE(items.has_function_call());
  EXPECT_EQ(fold(events), output);
  // Every event after an item's start names it.
  for (const Json& e : events) {
    if (e.contains("item_id")) {
      EXPECT_EQ(e["item_id"], output[e["output_index"].get<size_t>()]["id"]) << e.dump();
    }
  }
}

TEST(ResponsesStream, WhitespaceOnlyTextMakesNoMessage) {
  ResponseItems items;
  // The bundled model's tool turn: the reasoning closes at once, then the call, then a newline.
  run("</mm:think>\n]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]"
      "minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[</invoke>\n]<]minimax[>[</"
      "tool_call>\n",
      items);
  ASSERT_EQ(items.output().size(), 1u);
  EXPECT_EQ(items.output()[0]["type"], "function_call");
}

TEST(ResponsesStream, IncompleteMarksTheOpenItem) {
  ResponseItems items;
  std::vector<Json> events;
  ParseDelta delta;
  delta.content = "cut off";
  items.add(delta, events);
  items.finish(events, "incomplete");
  EXPECT_EQ(items.output()[0]["status"], "incomplete");
  EXPECT_EQ(events.back()["item"]["status"], "incomplete");
}

TEST(ResponsesResponse, ObjectUsageAndStatus) {
  const ResponseObjectMeta meta{"resp_1", 1700000000, "tiny"};
  const Json echo = {{"store", true}, {"tools", Json::array()}};
  ResponseUsage usage{10, 4, 6, 2};
  Json r = response_json(meta, echo, Json::array(), "completed", &usage);
  EXPECT_EQ(r["id"], "resp_1");
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["created_at"], 1700000000);
  EXPECT_EQ(r["status"], "completed");
  EXPECT_TRUE(r["error"].is_null());
  EXPECT_TRUE(r["incomplete_details"].is_null());
  EXPECT_EQ(r["model"], "tiny");
  EXPECT_EQ(r["store"], true);
  EXPECT_EQ(r["usage"],
            Json::parse(R"({"input_tokens":10,"input_tokens_details":{"cached_tokens":4},
      "output_tokens":6,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":16})"));
  r = response_json(meta, echo, Json::array(), response_status("length"), &usage);
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"], Json::parse(R"({"reason":"max_output_tokens"})"));
  EXPECT_EQ(response_status("stop"), "completed");
  r = response_json(meta, echo, Json::array(), "in_progress", nullptr);
  EXPECT_TRUE(r["usage"].is_null());
  EXPECT_EQ(response_event("response.created", r)["response"]["status"], "in_progress");
}

TEST(ResponsesResponse, SseNamesTheEventAndNumbersIt) {
  EXPECT_EQ(responses_sse({{"type", "response.output_text.delta"}, {"delta", "hi"}}, 7),
            "event: response.output_text.delta\n"
            "data: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\","
            "\"sequence_number\":7}\n\n");
  const Json error = response_error_event(bad_request("temperature: bad", "temperature"));
  EXPECT_EQ(error, Json::parse(R"({"type":"error","code":"BadRequestError",
                                   "message":"temperature: bad","param":"temperature"})"));
}

TEST(ResponseStore, KeepsResponsesAndConversationsAndEvictsTheOldest) {
  ResponseStore store(/*max_responses=*/2, /*max_bytes=*/1000);
  const Json a = Json::parse(R"([{"role":"user","content":"a"}])");
  const Json a_response = Json::parse(R"({"id":"resp_a","object":"response"})");
  store.put("resp_a", a, a_response);
  store.put("resp_b", Json::parse(R"([{"role":"user","content":"b"}])"), Json::object());
  EXPECT_EQ(store.find_conversation("resp_a"), a);
  EXPECT_EQ(store.find_response("resp_a"), a_response);
  store.put("resp_c", Json::parse(R"([{"role":"user","content":"c"}])"), Json::object());
  EXPECT_FALSE(store.find_conversation("resp_a"));  // the oldest went first
  EXPECT_FALSE(store.find_response("resp_a"));
  EXPECT_TRUE(store.find_conversation("resp_b"));
  EXPECT_TRUE(store.find_conversation("resp_c"));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_FALSE(store.find_conversation("resp_unknown"));
  EXPECT_FALSE(store.find_response("resp_unknown"));
}

TEST(ResponseStore, TheByteBoundCountsBothTextsEvictsAndOversizedIsNotKept) {
  ResponseStore store(/*max_responses=*/100, /*max_bytes=*/100);
  const Json forty = Json::array({std::string(32, 'x')});  // 36 bytes as JSON text
  const Json empty = Json::object();                       // "{}": 2 bytes
  store.put("1", forty, empty);                            // 38 bytes each
  store.put("2", forty, empty);
  EXPECT_EQ(store.bytes(), 76u);
  store.put("3", forty, empty);  // 114 > 100: "1" goes
  EXPECT_FALSE(store.find_conversation("1"));
  EXPECT_TRUE(store.find_conversation("2") && store.find_conversation("3"));
  EXPECT_EQ(store.bytes(), 76u);
  store.put("big", Json::array({std::string(60, 'x')}), Json::array({std::string(60, 'x')}));
  EXPECT_FALSE(store.find_response("big"));   // 128 bytes on its own: not kept
  EXPECT_TRUE(store.find_conversation("2"));  // nothing was evicted for it
}

TEST(ResponseStore, EraseForgetsOneResponseAndItsBytes) {
  ResponseStore store(/*max_responses=*/3, /*max_bytes=*/1000);
  for (const char* id : {"a", "b", "c"}) store.put(id, Json::array(), Json::object());
  EXPECT_TRUE(store.erase("b"));
  EXPECT_FALSE(store.erase("b"));  // already gone
  EXPECT_FALSE(store.erase("unknown"));
  EXPECT_FALSE(store.find_response("b"));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.bytes(), 8u);  // "[]" + "{}" for each of a and c
  // The freed place is used: two more fit before "a", the oldest, goes.
  store.put("d", Json::array(), Json::object());
  EXPECT_TRUE(store.find_response("a"));
  store.put("e", Json::array(), Json::object());
  EXPECT_FALSE(store.find_response("a"));
  EXPECT_TRUE(store.find_response("c") && store.find_response("d") && store.find_response("e"));
}

}  // namespace
}  // namespace minimax
