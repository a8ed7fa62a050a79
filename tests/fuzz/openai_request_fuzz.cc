// libFuzzer target for the OpenAI request parsers (chat, completions, responses): any byte string must either parse into a
// request that satisfies the parsers' promises, or throw ApiException with a 4xx status and a
// message. Crashes, hangs, other exceptions and sanitizer reports are the failures. Build with
// -DMINIMAX_FUZZ=ON (clang); seed corpus: tests/data/openai_bad/. Without libFuzzer, the same
// entry point runs over the corpus files and their mutations (tests/fuzz/replay_main.cc).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "serve/api_error.h"
#include "serve/openai_request.h"
#include "serve/openai_response.h"
#include "serve/responses_request.h"

namespace {

void check_generation(const minimax::GenerationFields& g) {
  if (g.n < 1 || g.n > 8) std::abort();
  if (g.max_tokens && *g.max_tokens < 1) std::abort();
  if (g.top_logprobs < 0 || g.top_logprobs > 20) std::abort();
  if (g.include_usage && !g.stream) std::abort();
  for (const auto& stop : g.stop) {
    if (stop.empty()) std::abort();
  }
}

template <typename Parse>
void run(Parse parse, std::string_view body) {
  try {
    parse(body);
  } catch (const minimax::ApiException& e) {
    const minimax::ApiError& error = e.error();
    if (error.status < 400 || error.status >= 500 || error.message.empty()) std::abort();
    minimax::error_body(error);  // must serialise whatever bytes the message quotes
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  run(
      [](std::string_view b) {
        minimax::ChatRequest r = minimax::parse_chat_request(b);
        check_generation(r.generation);
        if (r.messages.empty()) std::abort();
        minimax::json_text(r.messages);
        if (r.tool_choice.mode == minimax::ToolChoiceMode::kNamed && r.tools.is_null()) {
          std::abort();
        }
      },
      body);
  run(
      [](std::string_view b) {
        minimax::CompletionRequest r = minimax::parse_completion_request(b);
        check_generation(r.generation);
        if (r.prompt_text.has_value() == !r.prompt_tokens.empty()) std::abort();
      },
      body);
  run(
      [](std::string_view b) {
        minimax::ResponsesRequest r = minimax::parse_responses_request(b);
        check_generation(r.chat.generation);
        minimax::json_text(r.chat.messages);
        if (r.chat.tool_choice.mode == minimax::ToolChoiceMode::kNamed && r.chat.tools.is_null())
          std::abort();
      },
      body);
  return 0;
}
