// Bad request bodies (the corpus tests/data/openai_bad/, also the fuzz seed corpus): each is
// rejected with status 400, the expected `param` and a message naming the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "serve/api_error.h"
#include "serve/openai_request.h"
#include "serve/responses_request.h"

namespace minimax {
namespace {

struct BadCase {
  const char* file;  // tests/data/openai_bad/<file>.json; "chat_*", "completion_*", "responses_*"
  const char* param;
  const char* message;  // a substring of the error message
};

const BadCase kCases[] = {
    {"chat_malformed_json", "", "line 1, column 48"},
    {"chat_not_object", "", "expected a JSON object, got array"},
    {"chat_trailing_comma", "", "not valid JSON"},
    {"chat_deep_nesting", "", "nested deeper than 64"},
    {"chat_number_overflow", "", "number overflow"},
    {"chat_missing_messages", "messages", "messages: required"},
    {"chat_empty_messages", "messages", "must not be empty"},
    {"chat_messages_not_array", "messages", "expected an array, got string"},
    {"chat_unknown_role", "messages[2].role", "unknown role 'bot'"},
    {"chat_role_not_string", "messages[0].role", "expected a string, got number"},
    {"chat_user_content_missing", "messages[0].content", "required for role user"},
    {"chat_image_part", "messages[0].content[1].type", "'image_url' (text only) is not supported"},
    {"chat_part_without_text", "messages[0].content[0].text", "required"},
    {"chat_tool_call_bad_arguments", "messages[1].tool_calls[0].function.arguments",
     "is not valid JSON"},
    {"chat_tool_call_arguments_array", "messages[1].tool_calls[0].function.arguments", "got array"},
    {"chat_tool_call_no_name", "messages[1].tool_calls[0].function.name", "non-empty string"},
    {"chat_temperature_string", "temperature", "expected a number, got string"},
    {"chat_temperature_range", "temperature", "2.5 is out of range; expected [0, 2]"},
    {"chat_top_p_zero", "top_p", "expected (0, 1]"},
    {"chat_top_k_negative", "top_k", "-2 is out of range"},
    {"chat_min_p_range", "min_p", "out of range"},
    {"chat_presence_penalty_range", "presence_penalty", "expected [-2, 2]"},
    {"chat_repetition_penalty_zero", "repetition_penalty", "expected (0, 2]"},
    {"chat_max_tokens_zero", "max_tokens", "0 is out of range"},
    {"chat_max_completion_tokens_float", "max_completion_tokens", "expected an integer"},
    {"chat_n_too_large", "n", "expected 1..8"},
    {"chat_top_logprobs_without_logprobs", "top_logprobs", "needs logprobs set to true"},
    {"chat_top_logprobs_range", "top_logprobs", "expected 0..20"},
    {"chat_logprobs_not_bool", "logprobs", "expected a boolean, got number"},
    {"chat_stream_options_without_stream", "stream_options", "only allowed when stream is true"},
    {"chat_prompt_logprobs_stream", "prompt_logprobs", "not available when stream is true"},
    {"chat_prompt_logprobs_negative", "prompt_logprobs", "-1 is out of range"},
    {"chat_stop_empty", "stop[1]", "must not be empty"},
    {"chat_stop_number", "stop", "a string or an array of strings"},
    {"chat_tool_type", "tools[0].type", "tool type 'retrieval' is not supported"},
    {"chat_tool_no_name", "tools[0].function.name", "non-empty string"},
    {"chat_tool_parameters_string", "tools[0].function.parameters", "expected an object"},
    {"chat_tool_choice_unknown_name", "tool_choice.function.name",
     "'get_time' is not one of the request's tools"},
    {"chat_tool_choice_bad_string", "tool_choice", "unknown value 'always'"},
    {"chat_tool_choice_required_no_tools", "tool_choice", "needs tools"},
    {"chat_template_kwargs_string", "chat_template_kwargs", "expected an object"},
    {"chat_template_kwargs_tools", "chat_template_kwargs.tools",
     "the server sets this template variable (from the request's tools)"},
    {"chat_template_kwargs_bos_token", "chat_template_kwargs.bos_token",
     "the server sets this template variable"},
    {"chat_response_format_schema_maximum",
     "response_format.json_schema.schema.properties.age.maximum", "not supported"},
    {"chat_response_format_unknown_type", "response_format.type", "unknown type 'yaml'"},
    {"chat_response_format_no_schema", "response_format.json_schema.schema", "required"},
    {"chat_response_format_lookahead", "response_format.json_schema.schema.pattern", "lookaround"},
    {"chat_logit_bias", "logit_bias", "not supported"},
    {"chat_functions_legacy", "functions", "use tools"},
    {"chat_continue_and_generation_prompt", "continue_final_message", "add_generation_prompt"},
    {"chat_seed_string", "seed", "expected an integer, got string"},
    {"completion_missing_prompt", "prompt", "prompt: required"},
    {"completion_batch_prompts", "prompt", "2 prompts in one request are not supported"},
    {"completion_empty_prompt", "prompt", "must not be empty"},
    {"completion_negative_token", "prompt[2]", "token id -3 is out of range"},
    {"completion_prompt_object", "prompt", "expected a string or an array of token ids"},
    {"completion_suffix", "suffix", "suffix is not supported"},
    {"completion_logprobs_bool", "logprobs", "expected an integer, got boolean"},
    {"completion_logprobs_range", "logprobs", "expected 0..20"},
    {"completion_best_of", "best_of", "not supported"},
    {"responses_input_number", "input", "expected a string or an array of input items"},
    {"responses_unknown_item", "input[0].type", "item type 'computer_call' is not supported"},
    {"responses_function_call_output_no_call_id", "input[0].call_id", "required"},
    {"responses_tool_choice_unknown_name", "tool_choice.name",
     "'g' is not one of the request's tools"},
    {"responses_text_format_bad_schema", "text.format.schema.properties.a.$ref",
     "'#/nowhere' does not resolve"},
    {"responses_background", "background", "is not supported"},
};

std::string read_case(const std::string& name) {
  std::ifstream in(std::string(MINIMAX_TEST_DATA) + "/openai_bad/" + name + ".json",
                   std::ios::binary);
  EXPECT_TRUE(in) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ApiError rejection(const std::string& name) {
  std::string body = read_case(name);
  try {
    if (name.starts_with("chat_")) {
      parse_chat_request(body);
    } else if (name.starts_with("responses_")) {
      parse_responses_request(body);
    } else {
      parse_completion_request(body);
    }
  } catch (const ApiException& e) {
    return e.error();
  }
  ADD_FAILURE() << name << " was accepted";
  return {};
}

TEST(OpenAiRequestBad, EveryCaseIsRejectedWithItsParamAndMessage) {
  ASSERT_GE(std::size(kCases), 25u);
  for (const BadCase& c : kCases) {
    SCOPED_TRACE(c.file);
    ApiError error = rejection(c.file);
    EXPECT_EQ(error.status, 400);
    EXPECT_EQ(error.type, "BadRequestError");
    EXPECT_EQ(error.param, c.param);
    EXPECT_NE(error.message.find(c.message), std::string::npos) << error.message;
  }
}

// The corpus and the table list the same files, so a new corpus file needs an expectation.
TEST(OpenAiRequestBad, TableCoversTheCorpus) {
  std::set<std::string> table, corpus;
  for (const BadCase& c : kCases) table.insert(c.file);
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(MINIMAX_TEST_DATA) + "/openai_bad")) {
    corpus.insert(entry.path().stem().string());
  }
  EXPECT_EQ(table, corpus);
}

TEST(OpenAiRequestBad, InvalidUtf8AndEmptyBodiesAreBadRequests) {
  for (std::string body : {std::string(""), std::string("{\"messages\": \"\xff\"}"),
                           std::string("{\"messages\": [{\"role\": \"user\", \"content\": 1}]}")}) {
    SCOPED_TRACE(body);
    try {
      parse_chat_request(body);
      ADD_FAILURE() << "accepted";
    } catch (const ApiException& e) {
      EXPECT_EQ(e.error().status, 400);
      EXPECT_FALSE(e.error().message.empty());
    }
  }
}

// nlohmann's parser stops at a NUL byte; a body with one anywhere is refused, not cut short.
TEST(OpenAiRequestBad, NulBytesAreBadRequests) {
  const std::string good = R"({"messages": [{"role": "user", "content": "hi"}]})";
  for (const std::string& body : {good + std::string(1, '\0'), good + std::string("\0garbage", 8),
                                  std::string(R"({"messages": [{"role": "user", "content": "h)") +
                                      std::string(1, '\0') + R"(i"}]})"}) {
    try {
      parse_chat_request(body);
      ADD_FAILURE() << "accepted a NUL at " << body.find('\0');
    } catch (const ApiException& e) {
      EXPECT_EQ(e.error().status, 400);
      EXPECT_NE(e.error().message.find("NUL byte at byte " + std::to_string(body.find('\0') + 1)),
                std::string::npos)
          << e.error().message;
    }
  }
}

}  // namespace
}  // namespace minimax
