// Anthropic Messages requests become the chat requests the templates and parsers know: system
// first, tool_result blocks as tool messages, thinking as reasoning_content, tool_use as
// tool_calls, tools and tool_choice in their OpenAI form, thinking as M3's thinking_mode; bad
// requests are 400s naming the field.
#include "serve/anthropic_request.h"

#include <gtest/gtest.h>

#include "serve/api_error.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// The body with model and max_tokens added (the fields every /v1/messages request has).
std::string body(Json fields) {
  Json out = {{"model", "m"}, {"max_tokens", 64}};
  for (const auto& [key, value] : fields.items()) out[key] = value;
  return out.dump();
}

Json user_hi() { return Json::array({{{"role", "user"}, {"content", "hi"}}}); }

// The field an invalid body is refused for (fails the test when it is accepted).
std::string refused_param(const std::string& text) {
  try {
    parse_messages_request(text);
  } catch (const ApiException& e) {
    EXPECT_EQ(e.error().status, 400) << e.what();
    return e.error().param;
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(AnthropicRequest, SystemBlocksAndTextBecomeTemplateMessages) {
  const MessagesRequest r = parse_messages_request(body({
      {"system",
       Json::array(
           {{{"type", "text"}, {"text", "x-anthropic-billing-header: cch=1;"}},
            {{"type", "text"}, {"text", "Be brief."}, {"cache_control", {{"type", "ephemeral"}}}},
            {{"type", "text"}, {"text", "Be kind."}}})},
      {"messages", Json::array({{{"role", "user"},
                                 {"content", Json::array({{{"type", "text"}, {"text", "a"}},
                                                          {{"type", "text"}, {"text", "b"}}})}}})},
  }));
  // The billing header (a per-request hash) is dropped; blocks are joined by newlines.
  EXPECT_EQ(r.chat.messages, Json::parse(R"([{"role":"system","content":"Be brief.\nBe kind."},
                                               {"role":"user","content":"a\nb"}])"));
  EXPECT_EQ(r.chat.generation.model, "m");
  EXPECT_EQ(r.chat.generation.max_tokens, 64);
  EXPECT_TRUE(r.chat.add_generation_prompt);
  EXPECT_FALSE(r.chat.continue_final_message);
  EXPECT_TRUE(r.chat.tools.is_null());
  EXPECT_EQ(r.chat.tool_choice.mode, ToolChoiceMode::kNone);
  EXPECT_EQ(r.thinking, ThinkingRequest::kDefault);
}

TEST(AnthropicRequest, ToolRoundTripBecomesToolCallsAndToolMessages) {
  const Json messages = Json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": [
      {"type": "thinking", "thinking": "I should call it.", "signature": "abc"},
      {"type": "redacted_thinking", "data": "opaque"},
      {"type": "text", "text": "Let me check."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
    {"role": "user", "content": [
      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"},
      {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true,
       "content": [{"type": "text", "text": "no"}, {"type": "text", "text": "data"}]},
      {"type": "text", "text": "Thanks"}]}])");
  const MessagesRequest r = parse_messages_request(body({{"messages", messages}}));
  EXPECT_EQ(r.chat.messages, Json::parse(R"([
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": "Let me check.", "reasoning_content": "I should call it.",
     "tool_calls": [{"id": "toolu_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
    {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "toolu_2", "content": "no\ndata"},
    {"role": "user", "content": "Thanks"}])"));
}

TEST(AnthropicRequest, AssistantWithOnlyToolUseHasNullContent) {
  const Json messages = Json::parse(R"([
    {"role": "user", "content": "x"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]}])");
  const MessagesRequest r = parse_messages_request(body({{"messages", messages}}));
  ASSERT_EQ(r.chat.messages.size(), 3u);
  EXPECT_TRUE(r.chat.messages[1]["content"].is_null());
  EXPECT_EQ(r.chat.messages[2], Json::parse(R"({"role":"tool","tool_call_id":"t","content":""})"));
}

TEST(AnthropicRequest, FinalAssistantMessageIsContinued) {
  const MessagesRequest r = parse_messages_request(body({{"messages", Json::parse(R"([
    {"role": "user", "content": "Count to 3"}, {"role": "assistant", "content": "1, 2,"}])")}}));
  EXPECT_TRUE(r.chat.continue_final_message);
  EXPECT_FALSE(r.chat.add_generation_prompt);
}

TEST(AnthropicRequest, ToolsAndToolChoiceTakeTheirOpenAiForm) {
  const Json tools = Json::parse(R"([
    {"name": "get_weather", "description": "Weather", "input_schema": {"type": "object",
     "properties": {"city": {"type": "string"}}, "required": ["city"]}, "cache_control": {"type": "ephemeral"}},
    {"type": "custom", "name": "noop", "input_schema": {"type": "object"}}])");
  const MessagesRequest automatic =
      parse_messages_request(body({{"messages", user_hi()}, {"tools", tools}}));
  EXPECT_EQ(automatic.chat.tools, Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Weather",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}}])"));
  EXPECT_EQ(automatic.chat.tool_choice.mode, ToolChoiceMode::kAuto);
  EXPECT_TRUE(automatic.chat.parallel_tool_calls);

  auto choice = [&](Json tool_choice) {
    return parse_messages_request(
               body({{"messages", user_hi()}, {"tools", tools}, {"tool_choice", tool_choice}}))
        .chat;
  };
  const ChatRequest any = choice({{"type", "any"}, {"disable_parallel_tool_use", true}});
  EXPECT_EQ(any.tool_choice.mode, ToolChoiceMode::kRequired);
  EXPECT_FALSE(any.parallel_tool_calls);
  const ChatRequest named = choice({{"type", "tool"}, {"name", "noop"}});
  EXPECT_EQ(named.tool_choice.mode, ToolChoiceMode::kNamed);
  EXPECT_EQ(named.tool_choice.name, "noop");
  EXPECT_EQ(choice({{"type", "none"}}).tool_choice.mode, ToolChoiceMode::kNone);
  EXPECT_EQ(choice({{"type", "auto"}}).tool_choice.mode, ToolChoiceMode::kAuto);

  EXPECT_EQ(refused_param(body({{"messages", user_hi()},
                                {"tools", tools},
                                {"tool_choice", {{"type", "tool"}, {"name", "nope"}}}})),
            "tool_choice.name");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"tool_choice", {{"type", "any"}}}})),
            "tool_choice");
  EXPECT_EQ(
      refused_param(body(
          {{"messages", user_hi()}, {"tools", tools}, {"tool_choice", {{"type", "required"}}}})),
      "tool_choice.type");
  EXPECT_EQ(
      refused_param(body(
          {{"messages", user_hi()},
           {"tools", Json::parse(R"([{"type": "web_search_20250305", "name": "web_search"}])")}})),
      "tools[0].type");
  EXPECT_EQ(
      refused_param(body({{"messages", user_hi()}, {"tools", Json::parse(R"([{"name": "f"}])")}})),
      "tools[0].input_schema");
}

TEST(AnthropicRequest, ThinkingMapsToM3ThinkingModeAndLeavesM2Alone) {
  MessagesRequest enabled = parse_messages_request(
      body({{"messages", user_hi()}, {"thinking", {{"type", "enabled"}, {"budget_tokens", 16}}}}));
  EXPECT_EQ(enabled.thinking, ThinkingRequest::kEnabled);
  EXPECT_EQ(enabled.budget_tokens, 16);
  MessagesRequest m2 = enabled;
  apply_thinking(enabled, ParserFormat::kMinimaxM3);
  EXPECT_EQ(enabled.chat.chat_template_kwargs, Json::parse(R"({"thinking_mode":"enabled"})"));
  apply_thinking(m2, ParserFormat::kMinimaxM2);
  EXPECT_EQ(m2.chat.chat_template_kwargs, Json::object());

  for (const auto& [type, mode] : {std::pair{"disabled", "disabled"}, {"adaptive", "adaptive"}}) {
    MessagesRequest r =
        parse_messages_request(body({{"messages", user_hi()}, {"thinking", {{"type", type}}}}));
    EXPECT_FALSE(r.budget_tokens);
    apply_thinking(r, ParserFormat::kMinimaxM3);
    EXPECT_EQ(r.chat.chat_template_kwargs["thinking_mode"], mode);
  }
  MessagesRequest absent = parse_messages_request(body({{"messages", user_hi()}}));
  apply_thinking(absent, ParserFormat::kMinimaxM3);
  EXPECT_EQ(absent.chat.chat_template_kwargs, Json::object());  // the template's default

  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"thinking", {{"type", "enabled"}}}})),
            "thinking.budget_tokens");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()},
                                {"thinking", {{"type", "enabled"}, {"budget_tokens", 64}}}})),
            "thinking.budget_tokens");  // must be below max_tokens (64)
  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"thinking", {{"type", "on"}}}})),
            "thinking.type");
}

TEST(AnthropicRequest, SamplingStopSequencesAndStream) {
  const MessagesRequest r = parse_messages_request(body({{"messages", user_hi()},
                                                         {"temperature", 0.5},
                                                         {"top_p", 0.9},
                                                         {"top_k", 5},
                                                         {"stop_sequences", {"END", "\n\n"}},
                                                         {"stream", true},
                                                         {"metadata", {{"user_id", "u"}}}}));
  const GenerationFields& g = r.chat.generation;
  EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.top_p, 0.9f);
  EXPECT_EQ(g.sampling.top_k, 5);
  EXPECT_EQ(g.stop, (std::vector<std::string>{"END", "\n\n"}));
  EXPECT_TRUE(g.stream);

  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"temperature", 1.5}})), "temperature");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"top_p", 0}})), "top_p");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"top_k", -1}})), "top_k");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"stop_sequences", {""}}})),
            "stop_sequences[0]");
}

TEST(AnthropicRequest, OutputConfigFormatCompilesToAGrammar) {
  const MessagesRequest r = parse_messages_request(
      body({{"messages", user_hi()},
            {"output_config", Json::parse(R"({"effort": "low", "format": {"type": "json_schema",
          "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}})")}}));
  EXPECT_NE(r.chat.generation.response_grammar, nullptr);
  EXPECT_EQ(refused_param(body({{"messages", user_hi()},
                                {"output_config", Json::parse(R"({"format": {"type": "json_schema",
                                  "schema": {"type": "integer", "maximum": 3}}})")}})),
            "output_config.format.schema.maximum");
}

TEST(AnthropicRequest, BadRequestsNameTheField) {
  EXPECT_EQ(refused_param(Json({{"max_tokens", 5}, {"messages", user_hi()}}).dump()), "model");
  EXPECT_EQ(refused_param(Json({{"model", "m"}, {"messages", user_hi()}}).dump()), "max_tokens");
  EXPECT_EQ(refused_param(body({{"max_tokens", 0}, {"messages", user_hi()}})), "max_tokens");
  EXPECT_EQ(refused_param(body({})), "messages");
  EXPECT_EQ(refused_param(body({{"messages", Json::array()}})), "messages");
  EXPECT_EQ(
      refused_param(body({{"messages", Json::parse(R"([{"role": "system", "content": "x"}])")}})),
      "messages[0].role");
  EXPECT_EQ(refused_param(body({{"messages", Json::parse(R"([{"role": "user"}])")}})),
            "messages[0].content");
  EXPECT_EQ(refused_param(body({{"messages", Json::parse(R"([{"role": "user", "content": [
              {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}]}])")}})),
            "messages[0].content[0].type");
  // tool_use belongs to the assistant, tool_result to the user.
  EXPECT_EQ(refused_param(body({{"messages", Json::parse(R"([{"role": "user", "content": [
              {"type": "tool_use", "id": "t", "name": "f", "input": {}}]}])")}})),
            "messages[0].content[0].type");
  EXPECT_EQ(refused_param(body({{"messages", Json::parse(R"([{"role": "assistant", "content": [
              {"type": "tool_use", "id": "t", "name": "f", "input": "x"}]}])")}})),
            "messages[0].content[0].input");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()}, {"system", 3}})), "system");
  EXPECT_EQ(refused_param(body({{"messages", user_hi()},
                                {"mcp_servers", Json::parse(R"([{"type": "url", "url": "x"}])")}})),
            "mcp_servers");
  EXPECT_EQ(refused_param("{\"model\": "), "");  // malformed JSON: the body as a whole
}

TEST(AnthropicRequest, CountTokensNeedsNoMaxTokens) {
  const MessagesRequest r = parse_count_tokens_request(
      Json({{"model", "m"}, {"system", "s"}, {"messages", user_hi()}}).dump());
  EXPECT_EQ(r.chat.messages.size(), 2u);
  EXPECT_FALSE(r.chat.generation.max_tokens);
}

}  // namespace
}  // namespace minimax
