// `minimax inspect DIR`: what a checkpoint directory holds, checked against the canonical tensor
// table for its config and quantization: architecture, dimensions, quantization per tensor group,
// tensor counts and bytes per dtype, shards, and every missing, unexpected or mis-shaped tensor.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax {

struct InspectReport {
  nlohmann::ordered_json summary;       // architecture, dimensions, quantization, shards, dtypes
  std::vector<std::string> missing;     // expected by the table, absent
  std::vector<std::string> unexpected;  // present, not expected and not a known skipped tensor
  std::vector<std::string> mismatched;  // present with another dtype or shape (with both)
  std::vector<std::string> skipped;     // MTP, vision tower, rotary inv_freq: present, not loaded

  bool ok() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
};

InspectReport inspect_checkpoint(const std::string& dir);
// Human-readable rendering; lists are cut after `max_list` names each (0 = all).
std::string format_inspect_report(const InspectReport& report, size_t max_list = 20);

}  // namespace minimax
