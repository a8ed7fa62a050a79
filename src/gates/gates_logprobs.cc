// The logprobs gates: chat logprobs (with top lists) and vLLM prompt_logprobs, checked for
// presence, shape, finiteness, sign, order and consistency with the chosen token.
#include <fmt/format.h>

#include "gates/gate_common.h"
#include "gates/gates.h"
#include "gates/logprob_checks.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;

std::optional<int64_t> usage_count(const json& response, const char* field) {
  if (response.contains("usage") && response["usage"].is_object() &&
      response["usage"].contains(field) && response["usage"][field].is_number_integer())
    return response["usage"][field].get<int64_t>();
  return std::nullopt;
}

GateResult finish(GateResult result, size_t problems, size_t checked, const char* unit,
                  const Thresholds& thresholds) {
  result.measured = fmt::format("{} problems in {} {}", problems, checked, unit);
  result.threshold = fmt::format("<= {} problems", thresholds.logprob_problems_allowed);
  result.passed = checked > 0 && problems <= thresholds.logprob_problems_allowed;
  return result;
}

}  // namespace

GateResult logprobs_gate(const OpenAiClient& server, const GateOptions& options) {
  const Thresholds& thresholds = options.thresholds;
  GateResult result{"logprobs", "", "", false, {}};
  // An arithmetic prompt (reasoning then content) and a copy prompt (content only).
  const std::vector<ChatTask> tasks = golden_tasks();
  size_t problems = 0;
  size_t tokens = 0;
  for (const ChatTask* task : {&tasks.front(), &tasks.back()}) {
    nlohmann::ordered_json request = chat_request(task->user, thresholds);
    request["logprobs"] = true;
    request["top_logprobs"] = thresholds.top_logprobs;
    try {
      const json response = server.chat(request);
      const ChatAnswer answer = read_chat_answer(response);
      LogprobCheckOptions check;
      check.top_logprobs = thresholds.top_logprobs;
      check.greedy = true;
      check.tolerance = thresholds.logprob_tolerance;
      check.expected_count = usage_count(response, "completion_tokens");
      const std::vector<std::string> found = check_chat_logprobs(answer.choice, check);
      problems += found.size();
      const json* content = nullptr;
      if (answer.choice.contains("logprobs") && answer.choice["logprobs"].is_object() &&
          answer.choice["logprobs"].contains("content"))
        content = &answer.choice["logprobs"]["content"];
      if (content != nullptr && content->is_array()) tokens += content->size();
      for (const std::string& problem : found)
        result.details.push_back(fmt::format("{} prompt: {}", task->kind, problem));
    } catch (const ConnectionError&) {
      throw;
    } catch (const std::exception& e) {
      ++problems;
      result.details.push_back(fmt::format("{} prompt: {}", task->kind, e.what()));
    }
  }
  return finish(std::move(result), problems, tokens, "tokens", thresholds);
}

GateResult prompt_logprobs_gate(const OpenAiClient& server, const GateOptions& options) {
  const Thresholds& thresholds = options.thresholds;
  GateResult result{"prompt_logprobs", "", "", false, {}};
  const std::vector<std::string> corpus = compare_corpus(options.markers);
  size_t problems = 0;
  size_t positions = 0;
  for (size_t i = 0; i < 2 && i < corpus.size(); ++i) {
    nlohmann::ordered_json request = {{"prompt", corpus[i]},
                                      {"max_tokens", 1},
                                      {"temperature", 0},
                                      {"prompt_logprobs", thresholds.top_logprobs}};
    try {
      const json response = server.completion(request);
      LogprobCheckOptions check;
      check.top_logprobs = thresholds.top_logprobs;
      check.tolerance = thresholds.logprob_tolerance;
      check.expected_count = usage_count(response, "prompt_tokens");
      const std::vector<std::string> found = check_prompt_logprobs(response, check);
      problems += found.size();
      if (const json* list = find_prompt_logprobs(response)) positions += list->size();
      for (const std::string& problem : found)
        result.details.push_back(fmt::format("corpus text {}: {}", i, problem));
    } catch (const ConnectionError&) {
      throw;
    } catch (const std::exception& e) {
      ++problems;
      result.details.push_back(fmt::format("corpus text {}: {}", i, e.what()));
    }
  }
  return finish(std::move(result), problems, positions, "prompt positions", thresholds);
}

}  // namespace minimax::gates
