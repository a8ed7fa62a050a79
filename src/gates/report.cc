// The gates' table and JSON.
#include "gates/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace minimax::gates {

std::string format_table(const std::vector<GateResult>& results, size_t max_details) {
  size_t gate_width = 4;
  size_t measured_width = 8;
  size_t threshold_width = 9;
  for (const GateResult& r : results) {
    gate_width = std::max(gate_width, r.gate.size());
    measured_width = std::max(measured_width, r.measured.size());
    threshold_width = std::max(threshold_width, r.threshold.size());
  }
  auto row = [&](std::string_view gate, std::string_view measured, std::string_view threshold,
                 std::string_view verdict) {
    return fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", gate, gate_width, measured, measured_width,
                       threshold, threshold_width, verdict);
  };
  std::string out = row("gate", "measured", "threshold", "result");
  out += row(std::string(gate_width, '-'), std::string(measured_width, '-'),
             std::string(threshold_width, '-'), "------");
  for (const GateResult& r : results)
    out += row(r.gate, r.measured, r.threshold, r.passed ? "pass" : "FAIL");
  for (const GateResult& r : results) {
    if (r.details.empty()) continue;
    out += fmt::format("\n{}:\n", r.gate);
    const size_t shown = std::min(r.details.size(), max_details);
    for (size_t i = 0; i < shown; ++i) out += fmt::format("  - {}\n", r.details[i]);
    if (shown < r.details.size())
      out += fmt::format("  ... and {} more\n", r.details.size() - shown);
  }
  const size_t failed = static_cast<size_t>(
      std::count_if(results.begin(), results.end(), [](const GateResult& r) { return !r.passed; }));
  out += failed == 0 ? fmt::format("\nall {} gates passed\n", results.size())
                     : fmt::format("\n{} of {} gates FAILED\n", failed, results.size());
  return out;
}

nlohmann::ordered_json results_json(const std::vector<GateResult>& results) {
  nlohmann::ordered_json out;
  out["passed"] = all_passed(results);
  out["gates"] = nlohmann::ordered_json::array();
  for (const GateResult& r : results)
    out["gates"].push_back({{"gate", r.gate},
                            {"measured", r.measured},
                            {"threshold", r.threshold},
                            {"passed", r.passed},
                            {"details", r.details}});
  return out;
}

bool all_passed(const std::vector<GateResult>& results) {
  return std::all_of(results.begin(), results.end(), [](const GateResult& r) { return r.passed; });
}

std::string count_text(size_t count, size_t total) {
  const double percent = total == 0 ? 0.0 : 100.0 * static_cast<double>(count) / total;
  return fmt::format("{}/{} ({:.1f}%)", count, total, percent);
}

namespace {

size_t min_count(double min_fraction, size_t total) {
  // A small epsilon so that 0.9 * 50 = 45 does not round up to 46 through binary fractions.
  return static_cast<size_t>(std::ceil(min_fraction * static_cast<double>(total) - 1e-9));
}

}  // namespace

std::string fraction_threshold_text(double min_fraction, size_t total) {
  return fmt::format(">= {}/{} ({:g}%)", min_count(min_fraction, total), total,
                     100.0 * min_fraction);
}

bool meets_fraction(size_t count, size_t total, double min_fraction) {
  return total > 0 && count >= min_count(min_fraction, total);
}

}  // namespace minimax::gates
