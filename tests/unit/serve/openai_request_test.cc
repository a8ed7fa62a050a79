// Good chat and completions requests of every shape parse into the right typed fields.
#include "serve/openai_request.h"

#include <gtest/gtest.h>

#include "serve/api_error.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

TEST(OpenAiChatRequest, MinimalRequestHasDefaults) {
  ChatRequest r =
      parse_chat_request(R"({"model":"mm","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(r.generation.model, "mm");
  ASSERT_EQ(r.messages.size(), 1u);
  EXPECT_EQ(r.messages[0], Json({{"role", "user"}, {"content", "hi"}}));
  EXPECT_FALSE(r.generation.max_tokens);
  EXPECT_FALSE(r.generation.sampling.temperature);
  EXPECT_FALSE(r.generation.sampling.seed);
  EXPECT_EQ(r.generation.n, 1);
  EXPECT_FALSE(r.generation.stream);
  EXPECT_FALSE(r.generation.logprobs);
  EXPECT_FALSE(r.generation.prompt_logprobs);
  EXPECT_TRUE(r.generation.skip_special_tokens);
  EXPECT_TRUE(r.tools.is_null());
  EXPECT_EQ(r.tool_choice.mode, ToolChoiceMode::kNone);
  EXPECT_EQ(r.chat_template_kwargs, Json::object());
  EXPECT_TRUE(r.add_generation_prompt);
  EXPECT_FALSE(r.continue_final_message);
}

TEST(OpenAiChatRequest, SamplingFieldsMapToOverrides) {
  ChatRequest r = parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],
      "temperature":0.7,"top_p":0.9,"top_k":40,"min_p":0.05,"seed":-1,
      "presence_penalty":0.5,"frequency_penalty":-0.5,"repetition_penalty":1.1,
      "max_tokens":100,"max_completion_tokens":50,"stop":"END","stop_token_ids":[7,9],"n":3,
      "stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},
      "logprobs":true,"top_logprobs":5,"ignore_eos":true,"skip_special_tokens":false,
      "user":"ignored","metadata":{"a":1},"unknown_field":[1,2,3]})");
  const auto& g = r.generation;
  EXPECT_FLOAT_EQ(*g.sampling.temperature, 0.7f);
  EXPECT_FLOAT_EQ(*g.sampling.top_p, 0.9f);
  EXPECT_EQ(*g.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(*g.sampling.min_p, 0.05f);
  EXPECT_EQ(*g.sampling.seed, ~uint64_t{0});  // -1's bits
  EXPECT_FLOAT_EQ(*g.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(*g.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(*g.max_tokens, 50);  // max_completion_tokens wins
  EXPECT_EQ(g.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(g.stop_token_ids, (std::vector<int32_t>{7, 9}));
  EXPECT_EQ(g.n, 3);
  EXPECT_TRUE(g.stream);
  EXPECT_TRUE(g.include_usage);
  EXPECT_TRUE(g.continuous_usage_stats);
  EXPECT_TRUE(g.logprobs);
  EXPECT_EQ(g.top_logprobs, 5);
  EXPECT_TRUE(g.ignore_eos);
  EXPECT_FALSE(g.skip_special_tokens);

  SamplingParams applied = apply_overrides(SamplingParams{}, g.sampling);
  EXPECT_FLOAT_EQ(applied.temperature, 0.7f);
  EXPECT_EQ(applied.top_k, 40);
}

TEST(OpenAiChatRequest, NullMeansUnsetAndIntegralFloatsAreIntegers) {
  ChatRequest r = parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],
      "temperature":null,"max_tokens":12.0,"stop":["a","b"],"top_k":-1,"seed":18446744073709551615,
      "prompt_logprobs":2,"tool_choice":null,"tools":null})");
  EXPECT_FALSE(r.generation.sampling.temperature);
  EXPECT_EQ(*r.generation.max_tokens, 12);
  EXPECT_EQ(r.generation.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*r.generation.sampling.top_k, -1);
  EXPECT_EQ(*r.generation.sampling.seed, ~uint64_t{0});
  EXPECT_EQ(*r.generation.prompt_logprobs, 2);
}

TEST(OpenAiChatRequest, MessagesAreNormalisedForTheTemplate) {
  ChatRequest r = parse_chat_request(R"({"messages":[
      {"role":"developer","content":"Be brief.","current_date":"2026-11-30"},
      {"role":"user","content":[{"type":"text","text":"What is "},{"type":"text","text":"2+2?"}],
       "name":"ann"},
      {"role":"assistant","content":null,"reasoning":"Add them.","tool_calls":[
        {"id":"call_1","type":"function","function":{"name":"calc","arguments":"{\"a\": 2, \"b\": [2]}"}},
        {"id":"call_2","function":{"name":"noop","arguments":""}},
        {"id":"call_3","type":"function","function":{"name":"obj","arguments":{"x":true}}}]},
      {"role":"tool","tool_call_id":"call_1","content":"4"},
      {"role":"assistant","content":"4","reasoning_content":"Done."}]})");
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[0],
            Json({{"role", "system"}, {"content", "Be brief."}, {"current_date", "2026-11-30"}}));
  EXPECT_EQ(r.messages[1], Json({{"role", "user"}, {"content", "What is 2+2?"}, {"name", "ann"}}));
  const Json& call_turn = r.messages[2];
  EXPECT_TRUE(call_turn["content"].is_null());
  EXPECT_EQ(call_turn["reasoning_content"], "Add them.");
  EXPECT_FALSE(call_turn.contains("reasoning"));
  ASSERT_EQ(call_turn["tool_calls"].size(), 3u);
  EXPECT_EQ(call_turn["tool_calls"][0],
            Json::parse(R"({"id":"call_1","type":"function","function":{"name":"calc",
                "arguments":{"a":2,"b":[2]}}})"));
  EXPECT_EQ(call_turn["tool_calls"][1]["type"], "function");
  EXPECT_EQ(call_turn["tool_calls"][1]["function"]["arguments"], Json::object());
  EXPECT_EQ(call_turn["tool_calls"][2]["function"]["arguments"], Json({{"x", true}}));
  EXPECT_EQ(r.messages[3], Json({{"role", "tool"}, {"content", "4"}, {"tool_call_id", "call_1"}}));
  EXPECT_EQ(r.messages[4]["reasoning_content"], "Done.");
}

TEST(OpenAiChatRequest, ToolsAndToolChoice) {
  const std::string prefix = R"({"messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"get_weather","description":"d",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
        {"type":"function","function":{"name":"get_time"}}])";
  ChatRequest r = parse_chat_request(prefix + "}");
  ASSERT_EQ(r.tools.size(), 2u);
  EXPECT_EQ(r.tools[0]["function"]["name"], "get_weather");
  // Key order is kept: the template prints the schema as given.
  EXPECT_EQ(r.tools[0]["function"].begin().key(), "name");
  EXPECT_EQ(r.tool_choice.mode, ToolChoiceMode::kAuto);
  EXPECT_TRUE(r.parallel_tool_calls);

  EXPECT_EQ(parse_chat_request(prefix + R"(,"tool_choice":"none"})").tool_choice.mode,
            ToolChoiceMode::kNone);
  EXPECT_EQ(parse_chat_request(prefix + R"(,"tool_choice":"required"})").tool_choice.mode,
            ToolChoiceMode::kRequired);
  ChatRequest named = parse_chat_request(
      prefix + R"(,"tool_choice":{"type":"function","function":{"name":"get_time"}},
                 "parallel_tool_calls":false})");
  EXPECT_EQ(named.tool_choice.mode, ToolChoiceMode::kNamed);
  EXPECT_EQ(named.tool_choice.name, "get_time");
  EXPECT_FALSE(named.parallel_tool_calls);

  // No tools: "auto" means nothing can be called; an empty list is no tools.
  ChatRequest no_tools = parse_chat_request(
      R"({"messages":[{"role":"user","content":"x"}],"tools":[],"tool_choice":"auto"})");
  EXPECT_TRUE(no_tools.tools.is_null());
  EXPECT_EQ(no_tools.tool_choice.mode, ToolChoiceMode::kNone);
}

TEST(OpenAiChatRequest, TemplateOptions) {
  ChatRequest r = parse_chat_request(R"({"messages":[{"role":"user","content":"x"},
      {"role":"assistant","content":"Sure, "}],"continue_final_message":true,
      "chat_template_kwargs":{"thinking_mode":"disabled"},"response_format":{"type":"text"}})");
  EXPECT_TRUE(r.continue_final_message);
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_EQ(r.chat_template_kwargs, Json({{"thinking_mode", "disabled"}}));

  try {
    parse_chat_request(
        R"({"messages":[{"role":"user","content":"x"}],"continue_final_message":true})");
    ADD_FAILURE() << "accepted continue_final_message after a user message";
  } catch (const ApiException& e) {
    EXPECT_EQ(e.error().param, "continue_final_message");
  }
}

TEST(OpenAiChatRequest, ResponseFormatCompilesAGrammar) {
  EXPECT_EQ(parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"text"}})").generation.response_grammar, nullptr);
  EXPECT_NE(parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_object"}})").generation.response_grammar, nullptr);
  const ChatRequest r = parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"p","strict":true,
      "schema":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],
      "additionalProperties":false}}}})");
  ASSERT_NE(r.generation.response_grammar, nullptr);
  EXPECT_GT(r.generation.response_grammar->rules.size(), 3u);
  // Completions take it too (no reasoning there: the whole text is constrained).
  EXPECT_NE(parse_completion_request(R"({"prompt":"x","response_format":{"type":"json_object"}})")
                .generation.response_grammar,
            nullptr);
}

TEST(OpenAiCompletionRequest, PromptShapes) {
  CompletionRequest text = parse_completion_request(R"({"prompt":"Once upon"})");
  EXPECT_EQ(text.prompt_text, "Once upon");
  EXPECT_TRUE(text.prompt_tokens.empty());
  EXPECT_EQ(*text.generation.max_tokens, 16);  // OpenAI's default
  EXPECT_FALSE(text.generation.logprobs);
  EXPECT_FALSE(text.echo);

  CompletionRequest ids = parse_completion_request(
      R"({"prompt":[1,2,3],"max_tokens":4,"echo":true,"logprobs":2,"suffix":""})");
  EXPECT_FALSE(ids.prompt_text);
  EXPECT_EQ(ids.prompt_tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(*ids.generation.max_tokens, 4);
  EXPECT_TRUE(ids.echo);
  EXPECT_TRUE(ids.generation.logprobs);
  EXPECT_EQ(ids.generation.top_logprobs, 2);

  EXPECT_EQ(parse_completion_request(R"({"prompt":["one"]})").prompt_text, "one");
  EXPECT_EQ(parse_completion_request(R"({"prompt":[[5,6]],"logprobs":0})").prompt_tokens,
            (std::vector<int32_t>{5, 6}));
  CompletionRequest zero = parse_completion_request(R"({"prompt":"a","logprobs":0,"n":2,
      "best_of":2,"stream":true,"stream_options":{"include_usage":true}})");
  EXPECT_TRUE(zero.generation.logprobs);
  EXPECT_EQ(zero.generation.top_logprobs, 0);
  EXPECT_EQ(zero.generation.n, 2);
  EXPECT_TRUE(zero.generation.include_usage);
}

TEST(OpenAiCompletionRequest, SharedFieldsAreCheckedToo) {
  try {
    parse_completion_request(R"({"prompt":"a","temperature":-0.1})");
    ADD_FAILURE() << "accepted";
  } catch (const ApiException& e) {
    EXPECT_EQ(e.error().param, "temperature");
  }
}

}  // namespace
}  // namespace minimax
