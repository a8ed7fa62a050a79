// The answer gates: golden prompts, greedy loops, needles and arithmetic.
#include <fmt/format.h>

#include "gates/gate_common.h"
#include "gates/gates.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;
using detail::ask;
using detail::mismatch;
using detail::TaskOutcome;

// Seeds of the fresh problems: one stream per gate, all derived from --seed.
uint64_t gate_seed(uint64_t seed, uint64_t gate) { return seed * 0x100 + gate; }

// The generated text as tokens: the logprob entries' token strings when the server sent them,
// else UTF-8 characters of reasoning + content.
std::vector<std::string> generated_units(const ChatAnswer& answer, bool* from_tokens) {
  std::vector<std::string> units;
  const json& choice = answer.choice;
  if (choice.contains("logprobs") && choice["logprobs"].is_object() &&
      choice["logprobs"].contains("content") && choice["logprobs"]["content"].is_array()) {
    for (const json& entry : choice["logprobs"]["content"])
      if (entry.is_object() && entry.contains("token") && entry["token"].is_string())
        units.push_back(entry["token"].get<std::string>());
  }
  *from_tokens = !units.empty();
  if (units.empty()) units = utf8_characters(answer.reasoning + answer.content);
  return units;
}

}  // namespace

GateResult golden_gate(const OpenAiClient& server, const GateOptions& options,
                       std::vector<std::string>* answers) {
  const std::vector<ChatTask> tasks = golden_tasks();
  GateResult result{"golden prompts", "", "", false, {}};
  size_t exact = 0;
  for (const ChatTask& task : tasks) {
    const TaskOutcome outcome = ask(server, task, options);
    if (answers) answers->push_back(outcome.ok ? outcome.answer : "<" + outcome.error + ">");
    if (outcome.ok && outcome.answer == task.expected_content) {
      ++exact;
      // The reasoning is part of the spec too; a different one is worth a note, not a failure.
      if (!task.expected_reasoning.empty() && outcome.reasoning != task.expected_reasoning)
        result.details.push_back(
            fmt::format("note: {} '{}': right answer, reasoning '{}' (spec: '{}')", task.kind,
                        task.user, detail::excerpt(outcome.reasoning), task.expected_reasoning));
    } else {
      result.details.push_back(mismatch(task, outcome));
    }
  }
  const double min_fraction = options.thresholds.golden_min_fraction;
  result.measured = count_text(exact, tasks.size());
  result.threshold = fraction_threshold_text(min_fraction, tasks.size());
  result.passed = meets_fraction(exact, tasks.size(), min_fraction);
  return result;
}

GateResult loops_gate(const OpenAiClient& server, const GateOptions& options) {
  const Thresholds& thresholds = options.thresholds;
  SplitMix64 rng(gate_seed(options.seed, 1));
  GateResult result{"greedy loops", "", "", false, {}};
  size_t loops = 0;
  size_t errors = 0;
  size_t char_fallbacks = 0;
  for (size_t i = 0; i < thresholds.loop_prompts; ++i) {
    ChatTask task;
    switch (i % 4) {
      case 0:
        task = arithmetic_task(make_arithmetic(rng));
        break;
      case 1:
        task = needle_task(make_random_needle_document(rng), 0);
        break;
      case 2:
        task = make_copy(rng);
        break;
      default:
        task = make_recall(rng);
        break;
    }
    nlohmann::ordered_json request = chat_request(task.user, thresholds);
    request["logprobs"] = true;
    try {
      const ChatAnswer answer = read_chat_answer(server.chat(request));
      bool from_tokens = false;
      const std::vector<std::string> units = generated_units(answer, &from_tokens);
      if (!from_tokens) ++char_fallbacks;
      const bool hit_limit = answer.finish_reason == "length";
      const auto loop = find_tail_loop(units, hit_limit, thresholds.loop);
      if (loop) {
        ++loops;
        result.details.push_back(fmt::format("{} '{}': '{}' repeated {} times at the end{}",
                                             task.kind, detail::excerpt(task.user, 40),
                                             detail::excerpt(loop->unit), loop->repeats,
                                             hit_limit ? " (hit max_tokens)" : ""));
      } else if (hit_limit) {
        result.details.push_back(fmt::format("note: {} '{}' hit max_tokens without a loop",
                                             task.kind, detail::excerpt(task.user, 40)));
      }
    } catch (const ConnectionError&) {
      throw;
    } catch (const Error& e) {
      ++errors;
      result.details.push_back(
          fmt::format("{} '{}': {}", task.kind, detail::excerpt(task.user, 40), e.what()));
    }
  }
  if (char_fallbacks > 0)
    result.details.push_back(fmt::format(
        "note: {} replies had no logprob tokens; characters were counted instead", char_fallbacks));
  result.measured = fmt::format("{} loops in {} prompts", loops, thresholds.loop_prompts);
  if (errors > 0) result.measured += fmt::format(", {} errors", errors);
  result.threshold =
      fmt::format("<= {} (tail unit x{} over >= {} tokens)", thresholds.loops_allowed,
                  thresholds.loop.min_repeats, thresholds.loop.min_span);
  result.passed = loops <= thresholds.loops_allowed && errors == 0;
  return result;
}

GateResult needles_gate(const OpenAiClient& server, const GateOptions& options) {
  // The spec's suggested grid: S in {8, 32, 64} x K in 1..3, the K needles at K of the depths
  // {0.1, 0.5, 0.9} in each rotation; every needle of every document is asked once.
  const int lengths[] = {8, 32, 64};
  const double depth_grid[] = {0.1, 0.5, 0.9};
  SplitMix64 rng(gate_seed(options.seed, 2));
  GateResult result{"needles", "", "", false, {}};
  size_t found = 0;
  size_t asked = 0;
  std::string per_length;
  for (int sentences : lengths) {
    size_t found_here = 0;
    size_t asked_here = 0;
    for (size_t count = 1; count <= 3; ++count) {
      for (size_t rotation = 0; rotation < 3; ++rotation) {
        std::vector<double> depths;
        for (size_t j = 0; j < count; ++j) depths.push_back(depth_grid[(rotation + j) % 3]);
        const NeedleDocument document = make_needle_document(rng, sentences, depths);
        for (size_t j = 0; j < count; ++j) {
          const ChatTask task = needle_task(document, j);
          const TaskOutcome outcome = ask(server, task, options);
          ++asked_here;
          if (outcome.ok && outcome.answer == task.expected_content) {
            ++found_here;
          } else {
            result.details.push_back(fmt::format("S={} K={} depth {}: {}", sentences, count,
                                                 depths[j], mismatch(task, outcome)));
          }
        }
      }
    }
    found += found_here;
    asked += asked_here;
    per_length += fmt::format("{}S={}: {}/{}", per_length.empty() ? "" : ", ", sentences,
                              found_here, asked_here);
  }
  const double min_fraction = options.thresholds.needles_min_fraction;
  result.measured = fmt::format("{} [{}]", count_text(found, asked), per_length);
  result.threshold = fraction_threshold_text(min_fraction, asked);
  result.passed = meets_fraction(found, asked, min_fraction);
  return result;
}

GateResult arithmetic_gate(const OpenAiClient& server, const GateOptions& options) {
  SplitMix64 rng(gate_seed(options.seed, 3));
  GateResult result{"arithmetic", "", "", false, {}};
  const size_t total = options.thresholds.arithmetic_problems;
  size_t correct = 0;
  for (size_t i = 0; i < total; ++i) {
    const ChatTask task = arithmetic_task(make_arithmetic(rng));
    const TaskOutcome outcome = ask(server, task, options);
    if (outcome.ok && outcome.answer == task.expected_content)
      ++correct;
    else
      result.details.push_back(mismatch(task, outcome));
  }
  const double min_fraction = options.thresholds.arithmetic_min_fraction;
  result.measured = count_text(correct, total);
  result.threshold = fraction_threshold_text(min_fraction, total);
  result.passed = meets_fraction(correct, total, min_fraction);
  return result;
}

}  // namespace minimax::gates
