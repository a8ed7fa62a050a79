// The order of the gates in the table.
#include "gates/gates.h"

namespace minimax::gates {

std::vector<GateResult> run_gates(const OpenAiClient& server, const OpenAiClient* other,
                                  const GateOptions& options) {
  std::vector<GateResult> results;
  std::vector<std::string> golden_answers;
  results.push_back(golden_gate(server, options, &golden_answers));
  results.push_back(loops_gate(server, options));
  results.push_back(needles_gate(server, options));
  results.push_back(arithmetic_gate(server, options));
  results.push_back(logprobs_gate(server, options));
  results.push_back(prompt_logprobs_gate(server, options));
  results.push_back(tool_call_gate(server, options));
  if (other != nullptr)
    for (GateResult& result : compare_gates(server, *other, options, golden_answers))
      results.push_back(std::move(result));
  return results;
}

}  // namespace minimax::gates
