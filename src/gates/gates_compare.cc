// The two-server gates: teacher-forced next-token agreement and mean loss over a fixed corpus,
// and identical greedy answers on the golden prompts; and the corpus itself.
#include <fmt/format.h>

#include "gates/agreement.h"
#include "gates/gate_common.h"
#include "gates/gates.h"
#include "gates/logprob_checks.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;

// A conversation in the markers' chat format: the user turn, then the assistant turn with the
// exact expected generation.
std::string conversation(const ChatMarkers& m, const ChatTask& task) {
  std::string generated = task.expected_reasoning.empty()
                              ? fmt::format("{}{}", m.think_close, task.expected_content)
                              : fmt::format("{}{}{}{}", m.think_open, task.expected_reasoning,
                                            m.think_close, task.expected_content);
  return fmt::format("{}{}{}\n{}{}{}", m.user_turn, task.user, m.end_of_message, m.assistant_turn,
                     generated, m.end_of_message);
}

std::string tool_conversation(const ChatMarkers& m, const ToolProblem& problem) {
  const json arguments = expected_tool_arguments(problem);
  const std::string parameter = arguments.begin().key();
  const std::string block =
      fmt::format("{0}\n{1}{2}\">{3}<{4}>{5}{3}</{4}>{3}</invoke>\n{6}", m.tool_open,
                  m.invoke_prefix, expected_tool_name(problem), m.tag_prefix, parameter,
                  arguments.begin()->get<std::string>(), m.tool_close);
  return fmt::format("{}{}{}\n{}{}{}{}\n{}<response>{}</response>{}\n{}{}{}{}", m.user_turn,
                     tool_user_message(problem), m.end_of_message, m.assistant_turn, m.think_close,
                     block, m.end_of_message, m.tool_turn, tool_result(problem), m.end_of_message,
                     m.assistant_turn, m.think_close, tool_final_answer(problem), m.end_of_message);
}

const json* prompt_token_ids(const json& response) {
  if (response.contains("prompt_token_ids") && response["prompt_token_ids"].is_array())
    return &response["prompt_token_ids"];
  if (response.contains("choices") && response["choices"].is_array() &&
      !response["choices"].empty() && response["choices"][0].is_object() &&
      response["choices"][0].contains("prompt_token_ids") &&
      response["choices"][0]["prompt_token_ids"].is_array())
    return &response["choices"][0]["prompt_token_ids"];
  return nullptr;
}

std::vector<PromptPosition> teacher_forced(const OpenAiClient& server, const std::string& text,
                                           const std::string& source) {
  const nlohmann::ordered_json request = {
      {"prompt", text}, {"max_tokens", 1}, {"temperature", 0}, {"prompt_logprobs", 1}};
  const json response = server.completion(request);
  const json* list = find_prompt_logprobs(response);
  if (list == nullptr) fail("{}: the reply has no prompt_logprobs", source);
  return read_prompt_positions(*list, prompt_token_ids(response), source);
}

}  // namespace

std::vector<std::string> compare_corpus(const ChatMarkers& markers) {
  std::vector<std::string> corpus;
  SplitMix64 rng(0xC0C0C0C0);
  for (int i = 0; i < 6; ++i)
    corpus.push_back(conversation(markers, arithmetic_task(make_arithmetic(rng))));
  const int lengths[] = {8, 32, 64};
  for (int i = 0; i < 6; ++i) {
    const std::vector<double> depths = {0.2 + 0.3 * (i % 3), 0.9 - 0.35 * (i % 3)};
    const NeedleDocument document = make_needle_document(rng, lengths[i % 3], depths);
    corpus.push_back(conversation(markers, needle_task(document, static_cast<size_t>(i % 2))));
  }
  for (int i = 0; i < 4; ++i) corpus.push_back(conversation(markers, make_copy(rng)));
  for (int i = 0; i < 4; ++i) corpus.push_back(conversation(markers, make_recall(rng)));
  for (int i = 0; i < 4; ++i)
    corpus.push_back(tool_conversation(markers, make_tool_problem(rng, i % 2 == 0)));
  return corpus;
}

std::vector<GateResult> compare_gates(const OpenAiClient& server, const OpenAiClient& other,
                                      const GateOptions& options,
                                      const std::vector<std::string>& server_golden_answers) {
  const Thresholds& thresholds = options.thresholds;
  GateResult agreement{"next-token agreement", "", "", false, {}};
  GateResult loss{"mean loss difference", "", "", false, {}};
  AgreementTally tally;
  bool complete = true;
  const std::vector<std::string> corpus = compare_corpus(options.markers);
  for (size_t i = 0; i < corpus.size(); ++i) {
    const std::string source = fmt::format("corpus text {}", i);
    try {
      const auto a = teacher_forced(server, corpus[i], server.url().root());
      const auto b = teacher_forced(other, corpus[i], other.url().root());
      tally.add(a, b, source);
    } catch (const ConnectionError&) {
      throw;
    } catch (const Error& e) {
      complete = false;
      agreement.details.push_back(fmt::format("{}: {}", source, e.what()));
    }
  }
  const bool measured = complete && tally.decided_positions() > 0;
  agreement.measured = fmt::format("{:.4f} ({}/{} decided positions; all {}: {:.4f})",
                                   tally.decided_agreement(), tally.decided_same_top(),
                                   tally.decided_positions(), tally.positions(), tally.agreement());
  agreement.threshold = fmt::format(">= {} on decided", thresholds.agreement_min);
  agreement.passed = measured && tally.decided_agreement() >= thresholds.agreement_min;
  loss.measured = fmt::format("{:.4f} ({:.4f} vs {:.4f} nats)", tally.loss_delta(),
                              tally.mean_loss_a(), tally.mean_loss_b());
  loss.threshold = fmt::format("<= {} nats", thresholds.loss_delta_max);
  loss.passed = measured && tally.loss_delta() <= thresholds.loss_delta_max;
  if (!measured) loss.details.push_back("not measured over the whole corpus (see agreement)");

  GateResult golden{"identical greedy answers", "", "", false, {}};
  std::vector<std::string> other_answers;
  golden_gate(other, options, &other_answers);
  const std::vector<ChatTask> tasks = golden_tasks();
  size_t same = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string& a = i < server_golden_answers.size() ? server_golden_answers[i] : "";
    const std::string& b = i < other_answers.size() ? other_answers[i] : "";
    if (a == b)
      ++same;
    else
      golden.details.push_back(fmt::format("{} '{}': '{}' vs '{}'", tasks[i].kind,
                                           detail::excerpt(tasks[i].user, 40), detail::excerpt(a),
                                           detail::excerpt(b)));
  }
  golden.measured = count_text(same, tasks.size());
  golden.threshold = fraction_threshold_text(thresholds.compare_golden_min_fraction, tasks.size());
  golden.passed = meets_fraction(same, tasks.size(), thresholds.compare_golden_min_fraction);
  return {agreement, loss, golden};
}

}  // namespace minimax::gates
