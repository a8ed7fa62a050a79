// Responses API requests become the chat requests the templates and parsers know: a string input
// is one user message, items become messages (a function_call joins the assistant turn before it,
// its output is a tool message, reasoning is reasoning_content), tools and tool_choice take their
// chat forms, the settings are echoed in the response's shape; bad requests are 400s naming the
// field.
#include "serve/responses_request.h"

#include <gtest/gtest.h>

#include "serve/api_error.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// The field an invalid body is refused for (fails the test when it is accepted).
std::string refused(const std::string& text) {
  try {
    parse_responses_request(text);
  } catch (const ApiException& e) {
    EXPECT_EQ(e.error().status, 400) << e.what();
    return e.error().param;
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

const char* kWeatherTool =
    R"({"type":"function","name":"get_weather","description":"Weather in a city.",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}}}})";

TEST(ResponsesRequest, StringInputIsOneUserMessageAndSettingsAreRead) {
  const ResponsesRequest r = parse_responses_request(R"({"model":"m","input":"hi",
      "instructions":"Be brief.","max_output_tokens":32,"temperature":0,"top_p":0.5,
      "stream":true,"store":false})");
  EXPECT_EQ(r.chat.messages, Json::parse(R"([{"role":"user","content":"hi"}])"));
  EXPECT_EQ(r.instructions, "Be brief.");
  EXPECT_EQ(r.chat.generation.model, "m");
  EXPECT_EQ(r.chat.generation.max_tokens, 32);
  EXPECT_EQ(r.chat.generation.sampling.temperature, 0.0f);
  EXPECT_EQ(r.chat.generation.sampling.top_p, 0.5f);
  EXPECT_TRUE(r.chat.generation.stream);
  EXPECT_FALSE(r.store);
  EXPECT_TRUE(r.previous_response_id.empty());
  EXPECT_EQ(r.chat.tool_choice.mode, ToolChoiceMode::kNone);
  EXPECT_EQ(r.echo["instructions"], "Be brief.");
  EXPECT_EQ(r.echo["max_output_tokens"], 32);
  EXPECT_EQ(r.echo["store"], false);
  EXPECT_EQ(r.echo["tools"], Json::array());
  EXPECT_EQ(r.echo["tool_choice"], "auto");
  EXPECT_TRUE(r.echo["previous_response_id"].is_null());
}

TEST(ResponsesRequest, ItemsBecomeTemplateMessages) {
  const ResponsesRequest r = parse_responses_request(R"({"input":[
      {"role":"developer","content":"Use tools."},
      {"type":"message","role":"user","content":[{"type":"input_text","text":"What is the "},
                                                 {"type":"input_text","text":"weather?"}]},
      {"type":"reasoning","id":"rs_1","summary":[],
       "content":[{"type":"reasoning_text","text":"Call the tool."}]},
      {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather",
       "arguments":"{\"city\":\"Paris\"}","status":"completed"},
      {"type":"function_call_output","call_id":"call_1","output":"sunny"},
      {"type":"message","role":"assistant","id":"msg_1","status":"completed",
       "content":[{"type":"output_text","text":"It is sunny.","annotations":[]}]},
      {"role":"user","content":"Thanks"}]})");
  EXPECT_EQ(r.chat.messages, Json::parse(R"([
      {"role":"system","content":"Use tools."},
      {"role":"user","content":"What is the weather?"},
      {"role":"assistant","content":null,"reasoning_content":"Call the tool.",
       "tool_calls":[{"id":"call_1","type":"function",
                      "function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},
      {"role":"tool","tool_call_id":"call_1","content":"sunny"},
      {"role":"assistant","content":"It is sunny."},
      {"role":"user","content":"Thanks"}])"));
}

TEST(ResponsesRequest, ReasoningThenTextIsOneAssistantTurn) {
  const ResponsesRequest r = parse_responses_request(R"({"input":[{"role":"user","content":"q"},
      {"type":"reasoning","summary":[{"type":"summary_text","text":"think"}]},
      {"role":"assistant","content":"a"}]})");
  EXPECT_EQ(r.chat.messages[1], Json::parse(R"({"role":"assistant","content":"a",
                                                 "reasoning_content":"think"})"));
}

TEST(ResponsesRequest, FunctionToolsTakeTheChatFormAndToolChoiceIsChecked) {
  const std::string tools = std::string(R"("tools":[)") + kWeatherTool + "]";
  ResponsesRequest r = parse_responses_request(R"({"input":"x",)" + tools + "}");
  EXPECT_EQ(r.chat.tools, Json::parse(R"([{"type":"function","function":{"name":"get_weather",
      "description":"Weather in a city.",
      "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}])"));
  EXPECT_EQ(r.chat.tool_choice.mode, ToolChoiceMode::kAuto);
  EXPECT_EQ(r.echo["tools"][0]["name"], "get_weather");  // echoed in the Responses shape
  r = parse_responses_request(R"({"input":"x","tool_choice":"required",)" + tools + "}");
  EXPECT_EQ(r.chat.tool_choice.mode, ToolChoiceMode::kRequired);
  r = parse_responses_request(
      R"({"input":"x","tool_choice":{"type":"function","name":"get_weather"},)" + tools + "}");
  EXPECT_EQ(r.chat.tool_choice.mode, ToolChoiceMode::kNamed);
  EXPECT_EQ(r.chat.tool_choice.name, "get_weather");
  r = parse_responses_request(R"({"input":"x","tool_choice":"none",)" + tools + "}");
  EXPECT_EQ(r.chat.tool_choice.mode, ToolChoiceMode::kNone);

  EXPECT_EQ(
      refused(R"({"input":"x","tool_choice":{"type":"function","name":"nope"},)" + tools + "}"),
      "tool_choice.name");
  EXPECT_EQ(refused(R"({"input":"x","tool_choice":"required"})"), "tool_choice");
  EXPECT_EQ(refused(R"({"input":"x","tools":[{"type":"web_search_preview"}]})"), "tools[0].type");
  EXPECT_EQ(refused(R"({"input":"x","tools":[{"type":"function"}]})"), "tools[0].name");
}

TEST(ResponsesRequest, BadRequestsNameTheField) {
  EXPECT_EQ(refused(R"({})"), "input");
  EXPECT_EQ(refused(R"({"input":3})"), "input");
  EXPECT_EQ(refused(R"({"input":[3]})"), "input[0]");
  EXPECT_EQ(refused(R"({"input":[{"role":"wizard","content":"x"}]})"), "input[0].role");
  EXPECT_EQ(refused(R"({"input":[{"role":"user"}]})"), "input[0].content");
  EXPECT_EQ(refused(R"({"input":[{"role":"user","content":[{"type":"input_image"}]}]})"),
            "input[0].content[0].type");
  EXPECT_EQ(refused(R"({"input":[{"type":"function_call","name":"f","arguments":"{}"}]})"),
            "input[0].call_id");
  EXPECT_EQ(refused(R"({"input":[{"type":"function_call","call_id":"c","name":"f",
                                  "arguments":"[1]"}]})"),
            "input[0].arguments");
  EXPECT_EQ(refused(R"({"input":[{"type":"function_call","call_id":"c","name":"f",
                                  "arguments":"{"}]})"),
            "input[0].arguments");
  EXPECT_EQ(refused(R"({"input":[{"type":"function_call_output","call_id":"c"}]})"),
            "input[0].output");
  EXPECT_EQ(refused(R"({"input":[{"type":"item_reference","id":"x"}]})"), "input[0].type");
  EXPECT_EQ(refused(R"({"input":[{"type":"web_search_call"}]})"), "input[0].type");
  EXPECT_EQ(refused(R"({"input":"x","temperature":3})"), "temperature");
  EXPECT_EQ(refused(R"({"input":"x","top_p":0})"), "top_p");
  EXPECT_EQ(refused(R"({"input":"x","max_output_tokens":0})"), "max_output_tokens");
  EXPECT_EQ(refused(R"({"input":"x","store":"yes"})"), "store");
  EXPECT_EQ(refused(R"({"input":"x","previous_response_id":7})"), "previous_response_id");
  EXPECT_EQ(refused(R"({"input":"x","background":true})"), "background");
  EXPECT_EQ(refused(R"({"input":"x","text":{"format":{"type":"json_schema"}}})"),
            "text.format.schema");
  EXPECT_EQ(refused(R"({"input":"x","truncation":"middle"})"), "truncation");
  // Nesting past the limit is refused before parsing, as on the chat route.
  EXPECT_EQ(refused(R"({"input":)" + std::string(100, '[') + std::string(100, ']') + "}"), "");
}

TEST(ResponsesRequest, TextFormatJsonSchemaIsAGrammar) {
  const ResponsesRequest r = parse_responses_request(R"({"input":"x","text":{"format":{
      "type":"json_schema","name":"p","schema":{"type":"object","properties":{"a":{"type":"integer"}}}}}})");
  EXPECT_NE(r.chat.generation.response_grammar, nullptr);
  EXPECT_EQ(r.echo["text"]["format"]["type"], "json_schema");
}

TEST(ResponsesRequest, ConversationIsInstructionsThenPreviousThenInput) {
  const Json previous = Json::parse(R"([{"role":"user","content":"a"},
                                        {"role":"assistant","content":"b"}])");
  const Json input = Json::parse(R"([{"role":"user","content":"c"}])");
  EXPECT_EQ(conversation_messages("sys", previous, input), Json::parse(R"([
      {"role":"system","content":"sys"},{"role":"user","content":"a"},
      {"role":"assistant","content":"b"},{"role":"user","content":"c"}])"));
  EXPECT_EQ(conversation_messages(std::nullopt, nullptr, input), input);
  EXPECT_THROW(conversation_messages(std::nullopt, nullptr, Json::array()), ApiException);
}

}  // namespace
}  // namespace minimax
