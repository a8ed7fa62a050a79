// A grammar whose automaton states grow without bound: 200 optional runs of any byte side by side,
// so that after n bytes every split of n among them is a stack, until the automaton's stack limit
// (GrammarAutomaton::kMaxStacks) is passed. Built directly, past the regex compiler's own bound on
// nested repetitions. Shared by the grammar tests (test_serve) and the engine's (test_runtime).
#pragma once

#include <memory>

#include "text/grammar/grammar.h"

namespace minimax {

inline std::shared_ptr<const Grammar> exploding_grammar() {
  GrammarBuilder b;
  SymbolSet any;
  for (int c = 0; c < 256; ++c) any.set(c);
  ElementSequence runs;
  for (int i = 0; i < 200; ++i)
    runs.push_back(GrammarBuilder::ref(b.repeat("run", {b.terminal(any)}, 0, 100)));
  return std::make_shared<const Grammar>(b.build(b.choice("root", {runs})));
}

}  // namespace minimax
