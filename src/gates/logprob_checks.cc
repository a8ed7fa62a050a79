// Shape and number checks for chat logprobs and vLLM prompt_logprobs.
#include "gates/logprob_checks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <map>

namespace minimax::gates {
namespace {

using json = nlohmann::json;

// Reads a logprob at `where`; records a problem and returns nullopt when it is not a finite
// number <= 0.
std::optional<double> read_logprob(const json& value, const std::string& where,
                                   std::vector<std::string>& problems) {
  if (!value.is_number()) {
    problems.push_back(fmt::format("{} is missing or not a number", where));
    return std::nullopt;
  }
  const double logprob = value.get<double>();
  if (!std::isfinite(logprob)) {
    problems.push_back(fmt::format("{} is not finite ({})", where, logprob));
    return std::nullopt;
  }
  if (logprob > 0) {
    problems.push_back(fmt::format("{} is positive ({})", where, logprob));
    return std::nullopt;
  }
  return logprob;
}

void check_content_entry(const json& entry, const std::string& where,
                         const LogprobCheckOptions& options, std::vector<std::string>& problems) {
  if (!entry.is_object()) {
    problems.push_back(fmt::format("{} is not an object", where));
    return;
  }
  auto token = entry.find("token");
  if (token == entry.end() || !token->is_string())
    problems.push_back(fmt::format("{}.token is missing or not a string", where));
  const std::optional<double> chosen =
      read_logprob(entry.value("logprob", json()), where + ".logprob", problems);
  if (options.top_logprobs <= 0) return;
  auto top = entry.find("top_logprobs");
  if (top == entry.end() || !top->is_array()) {
    problems.push_back(fmt::format("{}.top_logprobs is missing or not a list", where));
    return;
  }
  if (top->empty() || top->size() > static_cast<size_t>(options.top_logprobs))
    problems.push_back(fmt::format("{}.top_logprobs has {} entries, requested {}", where,
                                   top->size(), options.top_logprobs));
  std::optional<double> previous;
  std::optional<double> best;
  for (size_t j = 0; j < top->size(); ++j) {
    const std::string top_where = fmt::format("{}.top_logprobs[{}]", where, j);
    const json& candidate = (*top)[j];
    if (!candidate.is_object()) {
      problems.push_back(fmt::format("{} is not an object", top_where));
      continue;
    }
    const std::optional<double> logprob =
        read_logprob(candidate.value("logprob", json()), top_where + ".logprob", problems);
    if (!logprob) continue;
    if (!best) best = logprob;
    if (previous && *logprob > *previous + options.tolerance)
      problems.push_back(fmt::format("{}.top_logprobs not sorted descending ({} after {})", where,
                                     *logprob, *previous));
    previous = logprob;
    // The sampled token's own logprob must equal its entry in the top list. Two tokens can
    // decode to the same text (pieces of one UTF-8 character), so bytes must match too when both
    // sides carry them.
    const bool same_bytes = !entry.contains("bytes") || entry["bytes"].is_null() ||
                            !candidate.contains("bytes") || candidate["bytes"].is_null() ||
                            entry["bytes"] == candidate["bytes"];
    if (chosen && token != entry.end() && token->is_string() && candidate.contains("token") &&
        candidate["token"] == *token && same_bytes &&
        std::abs(*logprob - *chosen) > options.tolerance)
      problems.push_back(fmt::format("{}.logprob {} differs from its top_logprobs[{}] entry {}",
                                     where, *chosen, j, *logprob));
  }
  if (options.greedy && chosen && best && *chosen < *best - options.tolerance)
    problems.push_back(
        fmt::format("{}: greedy decode chose a token with logprob {} below the top-1 logprob {}",
                    where, *chosen, *best));
}

bool parse_token_id(const std::string& key, int64_t& id) {
  const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
  return error == std::errc() && end == key.data() + key.size() && id >= 0;
}

void check_prompt_entry(const json& entry, const std::string& where,
                        const LogprobCheckOptions& options, std::vector<std::string>& problems) {
  if (!entry.is_object() || entry.empty()) {
    problems.push_back(fmt::format("{} is not a non-empty object of token id -> logprob", where));
    return;
  }
  if (options.top_logprobs > 0 && entry.size() > static_cast<size_t>(options.top_logprobs) + 1)
    problems.push_back(
        fmt::format("{} has {} entries, at most {} expected (top {} + the prompt "
                    "token)",
                    where, entry.size(), options.top_logprobs + 1, options.top_logprobs));
  std::map<int64_t, double> by_rank;  // rank -> logprob
  for (const auto& [key, value] : entry.items()) {
    const std::string item = fmt::format("{}[\"{}\"]", where, key);
    int64_t id = 0;
    if (!parse_token_id(key, id))
      problems.push_back(fmt::format("{}: key is not a token id", item));
    if (!value.is_object()) {
      problems.push_back(fmt::format("{} is not an object", item));
      continue;
    }
    const std::optional<double> logprob =
        read_logprob(value.value("logprob", json()), item + ".logprob", problems);
    auto rank = value.find("rank");
    if (rank == value.end() || !rank->is_number_integer() || rank->get<int64_t>() < 1) {
      problems.push_back(fmt::format("{}.rank is missing or not an integer >= 1", item));
      continue;
    }
    auto decoded = value.find("decoded_token");
    if (decoded == value.end() || !(decoded->is_string() || decoded->is_null()))
      problems.push_back(fmt::format("{}.decoded_token is missing or not a string", item));
    if (logprob) by_rank.emplace(rank->get<int64_t>(), *logprob);
  }
  if (!by_rank.empty() && by_rank.begin()->first != 1)
    problems.push_back(fmt::format("{} has no rank-1 entry", where));
  std::optional<double> previous;
  for (const auto& [rank, logprob] : by_rank) {
    if (previous && logprob > *previous + options.tolerance)
      problems.push_back(fmt::format("{}: rank {} has logprob {} above a better rank's {}", where,
                                     rank, logprob, *previous));
    previous = logprob;
  }
}

}  // namespace

std::vector<std::string> check_chat_logprobs(const json& choice,
                                             const LogprobCheckOptions& options) {
  std::vector<std::string> problems;
  auto logprobs = choice.find("logprobs");
  if (logprobs == choice.end() || !logprobs->is_object()) {
    problems.push_back("choices[0].logprobs is missing or not an object");
    return problems;
  }
  auto content = logprobs->find("content");
  if (content == logprobs->end() || !content->is_array() || content->empty()) {
    problems.push_back("choices[0].logprobs.content is missing, not a list, or empty");
    return problems;
  }
  if (options.expected_count && static_cast<int64_t>(content->size()) != *options.expected_count)
    problems.push_back(
        fmt::format("choices[0].logprobs.content has {} entries but usage.completion_tokens is {}",
                    content->size(), *options.expected_count));
  for (size_t i = 0; i < content->size(); ++i)
    check_content_entry((*content)[i], fmt::format("choices[0].logprobs.content[{}]", i), options,
                        problems);
  return problems;
}

const json* find_prompt_logprobs(const json& response) {
  if (!response.is_object()) return nullptr;
  auto top = response.find("prompt_logprobs");
  if (top != response.end() && top->is_array()) return &*top;
  auto choices = response.find("choices");
  if (choices == response.end() || !choices->is_array() || choices->empty()) return nullptr;
  const json& first = (*choices)[0];
  if (!first.is_object()) return nullptr;
  auto inner = first.find("prompt_logprobs");
  if (inner != first.end() && inner->is_array()) return &*inner;
  return nullptr;
}

std::vector<std::string> check_prompt_logprobs(const json& response,
                                               const LogprobCheckOptions& options) {
  std::vector<std::string> problems;
  const json* list = find_prompt_logprobs(response);
  if (list == nullptr) {
    problems.push_back("prompt_logprobs is missing (neither top-level nor in choices[0])");
    return problems;
  }
  if (list->empty()) {
    problems.push_back("prompt_logprobs is empty");
    return problems;
  }
  if (options.expected_count && static_cast<int64_t>(list->size()) != *options.expected_count)
    problems.push_back(fmt::format("prompt_logprobs has {} entries but usage.prompt_tokens is {}",
                                   list->size(), *options.expected_count));
  if (!(*list)[0].is_null()) problems.push_back("prompt_logprobs[0] is not null");
  for (size_t i = 1; i < list->size(); ++i)
    check_prompt_entry((*list)[i], fmt::format("prompt_logprobs[{}]", i), options, problems);
  return problems;
}

}  // namespace minimax::gates
