// The data that describes minimax_m2 and minimax_m3 output (serve/parser_format.h).
#include "serve/parser_format.h"

#include "base/error.h"
#include "checkpoint/arch/architecture.h"

namespace minimax {
namespace {

// The markers are the architecture record's (checkpoint/arch/), the record whose reasoning parser
// this format is.
const OutputMarkers& markers_of(std::string_view parser) {
  for (const ArchitectureRecord* r : registered_architectures())
    if (r->reasoning_parser == parser) return r->markers;
  fail("parser format '{}': no architecture record names it as its reasoning parser", parser);
}

// The rules in which the formats differ beyond their markers (parser_format.h).
struct FormatRules {
  std::string_view name;  // the reasoning parser whose record holds the markers
  bool drop_close_in_content = false;
  bool parameter_tags = false;
  ThinkingMode default_mode = ThinkingMode::kEnabled;
};

// In ParserFormat's order. M2 drops a re-emitted </think> met in content, as vLLM's minimax_m2
// does, and starts in reasoning; M3 keeps it as literal content, as vLLM's minimax_m3 does, and is
// adaptive, as its template.
constexpr FormatRules kRules[] = {
    {"minimax_m2", true, true, ThinkingMode::kEnabled},
    {"minimax_m3", false, false, ThinkingMode::kAdaptive},
};

ParserFormatSpec spec_of(const FormatRules& rules) {
  const OutputMarkers& m = markers_of(rules.name);
  ParserFormatSpec spec{
      .name = rules.name,
      .markers = {std::string(m.think_open), std::string(m.think_close), std::string(m.tool_open)},
      .think_open = 0,
      .think_close = 1,
      .tool_marker = 2,
      .tool_start_suffix = std::string(m.tool_open_suffix),
      .tool_end_marker = 2,
      .tool_end_suffix = std::string(m.tool_close_suffix),
      .invoke_prefix = std::string(m.invoke_prefix),
      .drop_close_in_content = rules.drop_close_in_content,
      .parameter_tags = rules.parameter_tags,
      .role_start = std::string(m.turns.role_start),
      .assistant_role = std::string(m.turns.assistant_role),
      .end_of_message = std::string(m.turns.end_of_message),
      .default_mode = rules.default_mode,
  };
  if (m.tool_close != m.tool_open) {  // a marker of its own (M2); M3 closes with the same token
    spec.markers.push_back(std::string(m.tool_close));
    spec.tool_end_marker = 3;
  }
  return spec;
}

}  // namespace

size_t parser_format_index(ParserFormat format, std::string_view what) {
  const auto index = static_cast<size_t>(format);
  if (index >= std::size(kRules)) fail("{}: unknown parser format {}", what, index);
  return index;
}

const ParserFormatSpec& parser_format_spec(ParserFormat format) {
  static const ParserFormatSpec specs[] = {spec_of(kRules[0]), spec_of(kRules[1])};
  static_assert(std::size(specs) == std::size(kRules));
  return specs[parser_format_index(format, "parser format")];
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
