// `minimax gates`: the serving gates run against one OpenAI-compatible server (and, for the
// agreement gates, a second one), each returning a row of the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gates/chat_markers.h"
#include "gates/openai_client.h"
#include "gates/report.h"
#include "gates/tasks.h"
#include "gates/thresholds.h"

namespace minimax::gates {

struct GateOptions {
  uint64_t seed = 1;  // fresh problems (loops, needles, arithmetic, tools); golden ones are fixed
  Thresholds thresholds;
  ChatMarkers markers;  // the chat format of the corpus and the reasoning markers to strip
};

// Each gate catches the Errors of its own requests (a 400 or a malformed reply fails that gate
// with the message as a detail); ConnectionError propagates, since nothing after it can run.
GateResult golden_gate(const OpenAiClient& server, const GateOptions& options,
                       std::vector<std::string>* answers = nullptr);
GateResult loops_gate(const OpenAiClient& server, const GateOptions& options);
GateResult needles_gate(const OpenAiClient& server, const GateOptions& options);
GateResult arithmetic_gate(const OpenAiClient& server, const GateOptions& options);
GateResult logprobs_gate(const OpenAiClient& server, const GateOptions& options);
GateResult prompt_logprobs_gate(const OpenAiClient& server, const GateOptions& options);
GateResult tool_call_gate(const OpenAiClient& server, const GateOptions& options);
// Teacher-forced agreement and loss over compare_corpus(), and identical golden answers.
std::vector<GateResult> compare_gates(const OpenAiClient& server, const OpenAiClient& other,
                                      const GateOptions& options,
                                      const std::vector<std::string>& server_golden_answers);

// All of the above, in the table's order (the compare gates only when `other` is given).
std::vector<GateResult> run_gates(const OpenAiClient& server, const OpenAiClient* other,
                                  const GateOptions& options);

// The fixed teacher-forcing corpus: conversations of every task in the chat template's turn
// format (user turn, then the assistant turn with the exact expected generation), from fixed
// seeds. The template's constant system block is left out: it is the same in every conversation
// and memorised, so it would only inflate the agreement.
std::vector<std::string> compare_corpus(const ChatMarkers& markers);

// The chat request the gates send: one user message, greedy, the gates' max_tokens.
nlohmann::ordered_json chat_request(const std::string& user, const Thresholds& thresholds);

}  // namespace minimax::gates
