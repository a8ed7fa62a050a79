// The chat markers `minimax gates` hands to gates/ (which may include only base): the architecture
// records' spelling (checkpoint/arch/), so that no marker is written twice.
#pragma once

#include "checkpoint/arch/architecture.h"
#include "gates/chat_markers.h"

namespace minimax::cli {

// `corpus_format`'s turn, reasoning and tool-call markers, and the think_close of every
// registered architecture (what a server without a reasoning parser may leave in content).
gates::ChatMarkers gate_markers(const ArchitectureRecord& corpus_format);

}  // namespace minimax::cli
