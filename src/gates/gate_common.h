// Helpers shared by the gate implementations (not part of the public API).
#pragma once

#include <string>
#include <string_view>

#include "gates/gates.h"

namespace minimax::gates::detail {

// The text cut to `limit` characters with "..." and newlines shown as "\n", for details.
std::string excerpt(std::string_view text, size_t limit = 60);

// One chat request for `task`: the answer text (content without a leftover reasoning block) or
// the Error the request gave, as "error: ...". ConnectionError propagates.
struct TaskOutcome {
  bool ok = false;  // the request succeeded (not: the answer was right)
  std::string answer;
  std::string reasoning;
  std::string error;
};
TaskOutcome ask(const OpenAiClient& server, const ChatTask& task, const GateOptions& options);

// "kind 'prompt…': expected X, got Y" for a wrong answer, or the request's error.
std::string mismatch(const ChatTask& task, const TaskOutcome& outcome);

}  // namespace minimax::gates::detail
