// The MiniMax output formats the reasoning and tool-call parsers understand (minimax_m2,
// minimax_m3), described as data: the special-token markers (the architecture record's, whose
// reasoning parser the format is; checkpoint/arch/), which of them open and close reasoning or
// start a tool-call block, and the few rules in which the formats differ (spec/parsers.md §1-§3).
// The parsers hold no format-specific strings of their own; a ParserFormat outside the enum is an
// error wherever a format is chosen, never M3 by default.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/model_config.h"

namespace minimax {

enum class ParserFormat { kMinimaxM2, kMinimaxM3 };

// Whether the model is asked to think, used only when the prompt does not say so itself (no
// assistant header, or a generation prefix without markers). M3's chat_template_kwargs
// thinking_mode; M2's template has no switch (llama.cpp's enable_thinking is accepted).
enum class ThinkingMode { kEnabled, kDisabled, kAdaptive };

struct ParserFormatSpec {
  std::string_view name;  // "minimax_m2" / "minimax_m3"
  // The marker strings that are single special tokens; a marker's index is its number in marked
  // text (serve/marked_text.h). At most 8.
  std::vector<std::string> markers;
  int think_open = -1, think_close = -1;  // marker numbers
  // A tool-call block starts at marker `tool_marker` followed (after optional whitespace) by the
  // plain text `tool_start_suffix`: M2 <minimax:tool_call> alone, M3 ]<]minimax[>[ + <tool_call>.
  int tool_marker = -1;
  std::string tool_start_suffix;
  // The block ends likewise: M2 </minimax:tool_call>, M3 ]<]minimax[>[ + </tool_call>.
  int tool_end_marker = -1;
  std::string tool_end_suffix;
  // The text that opens one invoke inside a block, up to the tool's name: M2 `<invoke name="`,
  // M3 ]<]minimax[>[ + `<invoke name="`.
  std::string invoke_prefix;
  // Whether an end-of-reasoning marker met in content is removed (M2, as vLLM's minimax_m2 does
  // for a re-emitted </think>) or kept as literal content (M3, as vLLM's minimax_m3 does).
  bool drop_close_in_content = false;
  // Whether a parameter is written <parameter name="k">v</parameter> (M2) rather than as an
  // element <k>v</k> after tag_prefix (M3).
  bool parameter_tags = false;
  // The assistant role header, role_start + assistant_role ("]~b]" "ai\n"): the generation
  // prefix starts after its last occurrence. role_start is a special token.
  std::string role_start;
  std::string assistant_role;
  std::string end_of_message;  // "[e~[": after it the assistant turn is closed
  ThinkingMode default_mode = ThinkingMode::kEnabled;
};

// Throws Error for a value outside the enum.
const ParserFormatSpec& parser_format_spec(ParserFormat format);
// The position of `format` in the enum, for tables indexed by format; throws Error naming `what`
// for a value outside it (never M3 by default).
size_t parser_format_index(ParserFormat format, std::string_view what);

// The format an architecture writes: what `serve --reasoning-parser auto` and `chat` use.
ParserFormat parser_format_for(Arch arch);

// "minimax_m2" or "minimax_m3"; anything else throws Error naming `what` (e.g. "--parser").
ParserFormat parse_parser_format(std::string_view name, std::string_view what);

// The thinking mode a request asks for: chat_template_kwargs.thinking_mode ("enabled",
// "disabled", "adaptive") if present, else enable_thinking (true/false), else the format's
// default (M2 enabled, as vLLM's minimax_m2 starts in reasoning; M3 adaptive, as its template).
// A wrong type or value throws Error naming the field.
ThinkingMode thinking_mode_from_kwargs(const nlohmann::json& chat_template_kwargs,
                                       ParserFormat format);

}  // namespace minimax
