// The chat-format strings the gates write (the teacher-forcing corpus) and strip (reasoning a
// server left in an answer). gates/ may include only base, so `minimax gates` fills them from the
// architecture records (cli/gate_markers.h); the gates spell no marker of their own.
#pragma once

#include <string>
#include <vector>

namespace minimax::gates {

struct ChatMarkers {
  // Role start and role of each turn ("]~b]user\n", "]~b]ai\n", "]~b]tool\n"), and its end.
  std::string user_turn, assistant_turn, tool_turn;
  std::string end_of_message;
  std::string think_open, think_close;
  // A tool-call block: tool_open, then per invoke invoke_prefix + name + "\">" and its parameters
  // as elements, each tag after the first preceded by tag_prefix, then tool_close.
  std::string tool_open, tool_close;
  std::string invoke_prefix;
  std::string tag_prefix;
  // Every end-of-reasoning marker a server may leave in content (of every known format).
  std::vector<std::string> think_closes;
};

}  // namespace minimax::gates
