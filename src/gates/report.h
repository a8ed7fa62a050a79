// Gate results and their presentation: the table printed by `minimax gates` and its JSON form.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax::gates {

struct GateResult {
  std::string gate;       // e.g. "golden prompts"
  std::string measured;   // e.g. "10/10"
  std::string threshold;  // e.g. ">= 10/10"
  bool passed = false;
  std::vector<std::string> details;  // why it failed, or notes worth reading
};

// A fixed-width table: gate, measured, threshold, pass/FAIL; then the details of each gate,
// indented under its name, at most `max_details` per gate.
std::string format_table(const std::vector<GateResult>& results, size_t max_details = 8);

// {"passed": bool, "gates": [{"gate", "measured", "threshold", "passed", "details"}]}.
nlohmann::ordered_json results_json(const std::vector<GateResult>& results);

bool all_passed(const std::vector<GateResult>& results);

// "k/n" with the fraction as a percentage, e.g. "47/50 (94.0%)".
std::string count_text(size_t count, size_t total);
// ">= 45/50 (90%)": the smallest count that passes a fraction threshold over `total`.
std::string fraction_threshold_text(double min_fraction, size_t total);
bool meets_fraction(size_t count, size_t total, double min_fraction);

}  // namespace minimax::gates
