// The gates' chat markers from the architecture records (cli/gate_markers.h).
#include "cli/gate_markers.h"

#include <string>

namespace minimax::cli {

gates::ChatMarkers gate_markers(const ArchitectureRecord& corpus_format) {
  const OutputMarkers& m = corpus_format.markers;
  const TurnMarkers& t = m.turns;
  auto cat = [](std::string_view a, std::string_view b) { return std::string(a) + std::string(b); };
  gates::ChatMarkers out{
      .user_turn = cat(t.role_start, t.user_role),
      .assistant_turn = cat(t.role_start, t.assistant_role),
      .tool_turn = cat(t.role_start, t.tool_role),
      .end_of_message = std::string(t.end_of_message),
      .think_open = std::string(m.think_open),
      .think_close = std::string(m.think_close),
      .tool_open = cat(m.tool_open, m.tool_open_suffix),
      .tool_close = cat(m.tool_close, m.tool_close_suffix),
      .invoke_prefix = std::string(m.invoke_prefix),
      .tag_prefix = std::string(m.tag_prefix),
      .think_closes = {},
  };
  for (const ArchitectureRecord* record : registered_architectures())
    out.think_closes.push_back(std::string(record->markers.think_close));
  return out;
}

}  // namespace minimax::cli
