// The synthetic tasks of the bundled tiny model, generated exactly as docs/tiny_model_tasks.md
// specifies (word lists, sentence shapes, seeded splitmix64), each with its answer computed from
// the problem. The order of random draws within a problem is this file's (the spec leaves it
// free); it is part of what a fixed seed means for the gates.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax::gates {

// splitmix64 as in the spec: next() advances the state by the golden-ratio increment and mixes.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  uint64_t below(uint64_t n);               // u(n) = next() % n
  int64_t uniform(int64_t lo, int64_t hi);  // inclusive: lo + u(hi - lo + 1)

 private:
  uint64_t state_;
};

extern const std::vector<std::string> kFillerWords;  // 32
extern const std::vector<std::string> kKeys;         // 16
extern const std::vector<std::string> kCities;       // 12
extern const std::vector<std::string> kConditions;   // 5
extern const std::vector<std::string> kItems;        // 12

// One user turn and what the model's message must contain (through the server's parsers).
struct ChatTask {
  std::string kind;                // "arithmetic", "needles", "copy", "recall"
  std::string user;                // the user message
  std::string expected_content;    // exact CONTENT
  std::string expected_reasoning;  // exact REASONING ("" when the task has none)
};

// §3: `What is {a} + {b}?` with the column-step reasoning.
struct ArithmeticProblem {
  int64_t a = 0;
  int64_t b = 0;
  char op = '+';
};
ArithmeticProblem make_arithmetic(SplitMix64& rng);
std::string arithmetic_reasoning(const ArithmeticProblem& problem);
int64_t arithmetic_result(const ArithmeticProblem& problem);
ChatTask arithmetic_task(const ArithmeticProblem& problem);

// §2: S filler sentences.
std::vector<std::string> filler(SplitMix64& rng, int sentences);

// §4: a document of filler sentences with needles inserted before sentence round(depth * S).
struct Needle {
  std::string key;
  int64_t value = 0;
  double depth = 0.0;
};
struct NeedleDocument {
  int sentences = 0;  // S, filler sentences only
  std::vector<Needle> needles;
  std::string document;
};
// K = depths.size() needles with distinct keys and values drawn from `rng`, at the given depths.
NeedleDocument make_needle_document(SplitMix64& rng, int sentences,
                                    const std::vector<double>& depths);
// The spec's fully random document: S in [3, 64], K in [1, 3], depths u(1000001)/1e6, drawn
// in tools/tiny_model/tasks.py's order (so a seed gives its document).
NeedleDocument make_random_needle_document(SplitMix64& rng);
ChatTask needle_task(const NeedleDocument& document, size_t asked);

// §6.
ChatTask make_copy(SplitMix64& rng);
ChatTask make_recall(SplitMix64& rng);

// §5: a weather or price request, the call it must produce, the tool result and final answer.
struct ToolProblem {
  bool weather = true;
  std::string city;  // weather
  int64_t temperature = 0;
  std::string condition;
  std::string item;  // price
  int64_t price = 0;
};
ToolProblem make_tool_problem(SplitMix64& rng);  // weather or price, half each
ToolProblem make_tool_problem(SplitMix64& rng, bool weather);
nlohmann::ordered_json tool_definitions();  // the two tools, in the spec's key order
std::string tool_user_message(const ToolProblem& problem);
std::string expected_tool_name(const ToolProblem& problem);
nlohmann::json expected_tool_arguments(const ToolProblem& problem);
std::string tool_result(const ToolProblem& problem);  // json.dumps default separators
std::string tool_final_answer(const ToolProblem& problem);

// The fixed golden set: a few of each chat task from fixed seeds (independent of --seed).
std::vector<ChatTask> golden_tasks();

}  // namespace minimax::gates
