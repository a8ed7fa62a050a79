// Splits generated text into reasoning and content (spec/parsers.md §2): a state machine over
// marked text (serve/marked_text.h), parameterised by the format's markers. Markers may arrive in
// any chunking; the result never depends on how the output was cut into deltas.
//
// The state at the start of the output comes from the prompt's generation prefix only, the text
// after the LAST assistant header (spec/parsers.md §2.6): system prompts, tool definitions and
// history mention the markers in prose, and a scan of the whole prompt would wrongly decide that
// reasoning had already ended, streaming the model's reasoning as content.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "serve/parser_format.h"
#include "text/bpe_tokenizer.h"

namespace minimax {

enum class ReasoningState { kReasoning, kContent };

// The state the output starts in. The generation prefix decides when it holds a reasoning marker
// (the last of open marker / end marker / tool-call start wins); otherwise — no assistant header,
// a header whose turn was closed by the end-of-message marker, or a prefix without markers — the
// thinking mode does: enabled → reasoning, disabled or adaptive → content (the model may still
// open reasoning with a leading open marker).
ReasoningState initial_reasoning_state(std::string_view prompt, ParserFormat format,
                                       ThinkingMode mode);
// The same from prompt token ids: markers in the generation prefix are recognised by id, the
// header by the role token followed by text "ai\n".
ReasoningState initial_reasoning_state(std::span<const int32_t> prompt_ids,
                                       const BpeTokenizer& tokenizer, ParserFormat format,
                                       ThinkingMode mode);
// The state a marked generation prefix leaves, or kContent/kReasoning by `mode` when it holds no
// reasoning marker. Exposed for tests.
ReasoningState state_after_prefix(std::string_view marked_prefix, ParserFormat format,
                                  ThinkingMode mode);

// Rules, for an output that starts in state S:
// - Leading whitespace is held until the first other character. A leading open marker enters
//   (or stays in) reasoning and is dropped with that whitespace; a leading end marker in content
//   (M3's stray "</mm:think>", or a re-emitted one) is dropped likewise.
// - In reasoning, the end marker switches to content and is dropped; the tool-call start (M2
//   <minimax:tool_call>; M3 ]<]minimax[>[ <tool_call>) switches to content and is kept there for
//   the tool-call parser; any other marker is literal reasoning text.
// - In content, a non-leading open marker is literal content (vLLM PR #48690); an end marker is
//   dropped (M2, vLLM's double-</think> case) or kept literally (M3); content never returns to
//   reasoning.
class ReasoningParser {
 public:
  ReasoningParser(const ParserFormatSpec& spec, ReasoningState start);

  struct Output {
    std::string reasoning;  // plain text
    std::string content;    // marked text, for the tool-call parser
  };
  void push(std::string_view marked, Output& out);
  // Releases held text (leading whitespace, a possible M3 tool-call start) at the end of stream.
  void finish(Output& out);

  bool in_reasoning() const { return state_ == ReasoningState::kReasoning; }

 private:
  void emit(std::string_view marked, Output& out) const;
  bool step_leading(char c, Output& out);
  bool step_tool_hold(char c, Output& out);

  const ParserFormatSpec* spec_;
  ReasoningState state_;
  bool leading_ = true;
  std::string held_;         // leading whitespace, or an M3 namespace marker and what follows it
  bool tool_hold_ = false;   // held_ is a possible tool-call start
  size_t tool_matched_ = 0;  // characters of tool_start_suffix matched so far
};

}  // namespace minimax
