// One record per architecture: everything the engine knows about a model family that is not the
// forward pass itself (HF architecture string and model_type, the config hook, the tensor
// spelling, default parsers, chat template, output markers). Each record is one file in this
// folder (minimax_m2.cc, minimax_m3.cc); all other code reads the record instead of switching on
// the architecture. The records sit in checkpoint/ (not model/) because config parsing and the
// tensor table, which convert / validate / inspect use without a model, must read them.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "checkpoint/model_config.h"
#include "checkpoint/tensor_key.h"

namespace minimax {

class ConfigFields;

// The turn markers of a chat format: a turn is role_start + role + its text + end_of_message,
// e.g. "]~b]" "ai\n" ... "[e~[". role_start is a special token.
struct TurnMarkers {
  std::string_view role_start;
  std::string_view user_role, assistant_role, tool_role;
  std::string_view end_of_message;
};

// The special strings an architecture's model writes and its chat template spells
// (spec/parsers.md §1-§3). The think and tool markers are single special tokens.
struct OutputMarkers {
  std::string_view think_open;  // "<think>" / "<mm:think>"
  std::string_view think_close;
  // A tool-call block opens with the special token `tool_open` followed (after optional
  // whitespace) by the plain text `tool_open_suffix`, and closes likewise: M2
  // <minimax:tool_call> ... </minimax:tool_call>, M3 ]<]minimax[>[<tool_call> ...
  // ]<]minimax[>[</tool_call> (M3 writes its namespace token before every tag of the block).
  std::string_view tool_open, tool_open_suffix;
  std::string_view tool_close, tool_close_suffix;
  std::string_view invoke_prefix;  // the text that opens one invoke, up to the tool's name
  std::string_view tag_prefix;     // before every other tag of the block: M3's namespace token
  TurnMarkers turns;
};

struct ArchitectureRecord {
  Arch arch = Arch::kM2;
  std::string_view name;          // short name for messages: "M2"
  std::string_view architecture;  // config.json `architectures[0]`
  std::string_view model_type;    // config.json `model_type`, checked against the string above
  std::string_view description;   // one line for `minimax inspect` and docs

  // Reads and validates this architecture's fields of config.json into `config`, whose
  // architecture, model_type, arch, record, tensor_prefix and lm_head_name are already set.
  // `top` reads the whole file; errors name the file and field (checkpoint/config_fields.h).
  void (*parse_config)(const ConfigFields& top, ModelConfig& config) = nullptr;

  // Tensor names: every weight's full HF name is tensor_name(record, id), e.g.
  // "model.layers.3.block_sparse_moe.experts.7.w1.weight"; parse_tensor_name is its inverse on
  // any string (nullopt when the name is not one this architecture spells; it does not check
  // that the layer or expert exists in a config).
  std::string_view tensor_prefix;  // before embed_tokens / norm / layers
  std::string_view lm_head_name;   // the lm_head weight's full name
  std::string (*tensor_name)(const ArchitectureRecord& record, const TensorId& id) = nullptr;
  std::optional<TensorId> (*parse_tensor_name)(const ArchitectureRecord& record,
                                               std::string_view name) = nullptr;
  // The layer number of any name inside a decoder layer's module path (M2's MTP modules are
  // numbered after the main layers and hold names no TensorKey spells); nullopt otherwise.
  std::optional<int> (*layer_of_name)(const ArchitectureRecord& record,
                                      std::string_view name) = nullptr;
  // Top-level modules of the checkpoint that are not the language model (vision tower, ...):
  // skipped by the engine, kept unquantized by the quantization configs we write.
  std::span<const std::string_view> vision_modules;
  // The `exclude` list AMD Quark's MXFP4 recipe writes for this architecture (spec/formats.md
  // §2.1), used when we write a Quark quantization_config.
  std::span<const std::string_view> quark_exclude;
  // The `ignored_layers` of the MXFP8 quantization_config we write (MiniMaxAI/MiniMax-M3-MXFP8's
  // list for M3; docs/checkpoint.md).
  std::span<const std::string_view> mxfp8_ignored_layers;

  // Defaults of `minimax serve --reasoning-parser auto` / `--tool-call-parser auto`.
  std::string_view reasoning_parser;
  std::string_view tool_call_parser;
  // The built-in chat template (text/jinja/builtin_templates.h) used when the checkpoint has none.
  std::string_view chat_template;
  // The special strings of the output and chat format: the only place they are spelled. serve's
  // parsers read them (serve/parser_format.h); `minimax gates` hands them to gates/, which may not
  // include this layer.
  OutputMarkers markers;
};

// Every registered record, in a stable order.
std::span<const ArchitectureRecord* const> registered_architectures();
// The record of an `architectures[0]` string; Error "<source>: field 'architectures': '<s>' is
// not supported (registered: ...)" otherwise.
const ArchitectureRecord& find_architecture(std::string_view architecture,
                                            const std::string& source);
// The (first) record of a family.
const ArchitectureRecord& architecture_record(Arch arch);

// The records (one file each), listed by registered_architectures().
const ArchitectureRecord& minimax_m2_record();
const ArchitectureRecord& minimax_m3_record();

// The MiniMax spelling of a TensorId, shared by the records of the family: `record`'s prefix, then
// "layers.N." and HF's module path ("self_attn.q_proj.weight",
// "block_sparse_moe.experts.E.w1.weight", ...), and its inverse.
std::string minimax_tensor_name(const ArchitectureRecord& record, const TensorId& id);
std::optional<TensorId> parse_minimax_tensor_name(const ArchitectureRecord& record,
                                                  std::string_view name);
std::optional<int> minimax_layer_of_name(const ArchitectureRecord& record, std::string_view name);

// The turn markers every MiniMax chat template writes.
inline constexpr TurnMarkers kMinimaxTurnMarkers = {
    .role_start = "]~b]",
    .user_role = "user\n",
    .assistant_role = "ai\n",
    .tool_role = "tool\n",
    .end_of_message = "[e~[",
};

}  // namespace minimax
