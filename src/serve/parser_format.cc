// The data that describes minimax_m2 and minimax_m3 output (serve/parser_format.h).
#include "serve/parser_format.h"

#include "base/error.h"
#include "checkpoint/arch/architecture.h"

namespace minimax {
namespace {

// The think markers are the architecture record's (checkpoint/arch/), the record whose reasoning
// parser this format is; the tool-call markers are this file's.
std::vector<std::string> think_markers_of(std::string_view parser) {
  for (const ArchitectureRecord* r : registered_architectures())
    if (r->reasoning_parser == parser)
      return {std::string(r->think_open), std::string(r->think_close)};
  fail("parser format '{}': no architecture record names it as its reasoning parser", parser);
}

std::vector<std::string> concat(std::vector<std::string> a, std::vector<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

const ParserFormatSpec& parser_format_spec(ParserFormat format) {
  static const ParserFormatSpec m2{
      .name = "minimax_m2",
      .markers =
          concat(think_markers_of("minimax_m2"), {"<minimax:tool_call>", "</minimax:tool_call>"}),
      .think_open = 0,
      .think_close = 1,
      .tool_marker = 2,
      .tool_start_suffix = "",
      .tool_end_marker = 3,
      .tool_end_suffix = "",
      .invoke_prefix = "<invoke name=\"",
      .drop_close_in_content = true,
      .role_start = "]~b]",
      .assistant_role = "ai\n",
      .end_of_message = "[e~[",
      .default_mode = ThinkingMode::kEnabled,
  };
  static const ParserFormatSpec m3{
      .name = "minimax_m3",
      .markers = concat(think_markers_of("minimax_m3"), {"]<]minimax[>["}),
      .think_open = 0,
      .think_close = 1,
      .tool_marker = 2,
      .tool_start_suffix = "<tool_call>",
      .tool_end_marker = 2,
      .tool_end_suffix = "</tool_call>",
      .invoke_prefix = "]<]minimax[>[<invoke name=\"",
      .drop_close_in_content = false,
      .role_start = "]~b]",
      .assistant_role = "ai\n",
      .end_of_message = "[e~[",
      .default_mode = ThinkingMode::kAdaptive,
  };
  return format == ParserFormat::kMinimaxM2 ? m2 : m3;
}

ParserFormat parser_format_for(Arch arch) {
  return parse_parser_format(architecture_record(arch).reasoning_parser, "architecture record");
}

ParserFormat parse_parser_format(std::string_view name, std::string_view what) {
  if (name == "minimax_m2") return ParserFormat::kMinimaxM2;
  if (name == "minimax_m3") return ParserFormat::kMinimaxM3;
  fail("{}: unknown parser '{}' (expected minimax_m2 or minimax_m3)", what, name);
}

ThinkingMode thinking_mode_from_kwargs(const nlohmann::json& kwargs, ParserFormat format) {
  const ThinkingMode fallback = parser_format_spec(format).default_mode;
  if (kwargs.is_null()) return fallback;
  if (!kwargs.is_object())
    fail("chat_template_kwargs: expected an object, got {}", kwargs.type_name());
  if (auto it = kwargs.find("thinking_mode"); it != kwargs.end() && !it->is_null()) {
    if (!it->is_string())
      fail("chat_template_kwargs.thinking_mode: expected a string, got {}", it->type_name());
    const std::string& mode = it->get_ref<const std::string&>();
    if (mode == "enabled") return ThinkingMode::kEnabled;
    if (mode == "disabled") return ThinkingMode::kDisabled;
    if (mode == "adaptive") return ThinkingMode::kAdaptive;
    fail("chat_template_kwargs.thinking_mode: '{}' is not enabled, disabled or adaptive", mode);
  }
  if (auto it = kwargs.find("enable_thinking"); it != kwargs.end() && !it->is_null()) {
    if (!it->is_boolean())
      fail("chat_template_kwargs.enable_thinking: expected a boolean, got {}", it->type_name());
    return it->get<bool>() ? ThinkingMode::kEnabled : ThinkingMode::kDisabled;
  }
  return fallback;
}

}  // namespace minimax
