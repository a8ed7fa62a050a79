// config.json → ModelConfig: the architecture's record is looked up by `architectures[0]`, and
// its config hook reads the fields with the shared readers here (dimensions, RoPE, sparse
// attention, consistency checks).
#include "checkpoint/model_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "base/error.h"
#include "checkpoint/arch/architecture.h"
#include "checkpoint/config_fields.h"

namespace minimax {
namespace {

using nlohmann::json;

// rotary_dim may be written directly (M2, M3) or as a fraction of head_dim (newer HF exports, in
// `partial_rotary_factor` or `rope_parameters`); when both are present they must agree. A loader
// that ignores them would rotate all head dims (spec/model.md §6 item 1).
int read_rotary_dim(const ConfigFields& text, int head_dim) {
  std::optional<int> from_dim;
  if (text.has("rotary_dim")) from_dim = text.integer("rotary_dim");
  std::optional<double> factor;
  std::string factor_field = "partial_rotary_factor";
  if (text.has("partial_rotary_factor")) {
    factor = text.number("partial_rotary_factor");
  } else if (text.has("rope_parameters")) {
    ConfigFields rope(text.object("rope_parameters"), text.prefix() + "rope_parameters.",
                      text.source());
    if (rope.has("partial_rotary_factor")) {
      factor = rope.number("partial_rotary_factor");
      factor_field = "rope_parameters.partial_rotary_factor";
    }
  }
  if (factor) {
    double dims = *factor * head_dim;
    if (std::fabs(dims - std::round(dims)) > 1e-9)
      text.error(factor_field,
                 fmt::format("{} x head_dim {} is not a whole number of dims", *factor, head_dim));
    if (from_dim && *from_dim != int(std::round(dims)))
      text.error("rotary_dim", fmt::format("{} contradicts {} {} (= {} dims of head_dim {})",
                                           *from_dim, factor_field, *factor, dims, head_dim));
    if (!from_dim) from_dim = int(std::round(dims));
  }
  if (!from_dim) text.error("rotary_dim", "required but missing (nor partial_rotary_factor)");
  return *from_dim;
}

// Written at the top level (original configs), in rope_parameters (transformers 5 exports) or both;
// two different values are a contradiction.
double read_rope_theta(const ConfigFields& text) {
  std::optional<double> nested;
  if (text.has("rope_parameters")) {
    ConfigFields rope(text.object("rope_parameters"), text.prefix() + "rope_parameters.",
                      text.source());
    if (rope.has("rope_theta")) nested = rope.number("rope_theta");
  }
  if (!text.has("rope_theta")) {
    if (!nested) text.error("rope_theta", "required but missing (nor rope_parameters.rope_theta)");
    return *nested;
  }
  double top = text.number("rope_theta");
  if (nested && *nested != top)
    text.error("rope_theta",
               fmt::format("{} contradicts rope_parameters.rope_theta {}", top, *nested));
  return top;
}

// Only plain RoPE is implemented; a YaRN / linear scaled config must not load silently.
void reject_rope_scaling(const ConfigFields& text) {
  auto check = [&](std::string_view key) {
    if (!text.has(key)) return;
    ConfigFields scaling(text.object(key), text.prefix() + std::string(key) + ".", text.source());
    std::string type = scaling.string_or("rope_type", scaling.string_or("type", "default"));
    if (type != "default")
      scaling.error("rope_type", fmt::format("'{}' RoPE scaling is not supported", type));
  };
  check("rope_scaling");
  check("rope_parameters");
}

}  // namespace

void read_sparse_attention(const ConfigFields& text, ModelConfig& config) {
  SparseAttentionConfig& sparse = config.sparse;
  sparse.layer_sparse.assign(config.num_layers, 0);
  sparse.disable_index_value.assign(config.num_layers, 0);
  if (!text.has("sparse_attention_config")) return;
  ConfigFields s(text.object("sparse_attention_config"), text.prefix() + "sparse_attention_config.",
                 text.source());
  sparse.enabled = s.boolean_or("use_sparse_attention", false);
  if (!sparse.enabled) return;
  sparse.index_dim = s.positive("sparse_index_dim");
  sparse.num_index_heads = s.positive("sparse_num_index_heads");
  sparse.block_size = s.positive("sparse_block_size");
  sparse.topk_blocks = s.positive("sparse_topk_blocks");
  sparse.score_type = s.string_or("sparse_score_type", "max");
  sparse.init_blocks = s.integer_or("sparse_init_block", 0);
  sparse.local_blocks = s.integer_or("sparse_local_block", 1);
  sparse.layer_sparse = s.layer_flags("sparse_attention_freq", config.num_layers);
  sparse.disable_index_value = s.has("sparse_disable_index_value")
                                   ? s.layer_flags("sparse_disable_index_value", config.num_layers)
                                   : sparse.layer_sparse;
  if (sparse.score_type != "max")
    s.error("sparse_score_type",
            fmt::format("'{}' is not supported (only 'max')", sparse.score_type));
  if (sparse.init_blocks < 0) s.error("sparse_init_block", "must not be negative");
  if (sparse.local_blocks < 0) s.error("sparse_local_block", "must not be negative");
  if (sparse.init_blocks + sparse.local_blocks > sparse.topk_blocks)
    s.error("sparse_topk_blocks",
            fmt::format("{} is less than the forced init ({}) + local ({}) blocks",
                        sparse.topk_blocks, sparse.init_blocks, sparse.local_blocks));
  // Block selection runs per KV group: index-query head g pairs with KV head g (spec §5.3).
  if (sparse.num_index_heads != config.num_kv_heads)
    s.error("sparse_num_index_heads",
            fmt::format("{} must equal num_key_value_heads {} (one index head per KV group)",
                        sparse.num_index_heads, config.num_kv_heads));
  if (config.rotary_dim > sparse.index_dim)
    s.error("sparse_index_dim",
            fmt::format("{} is smaller than rotary_dim {}", sparse.index_dim, config.rotary_dim));
  for (int layer = 0; layer < config.num_layers; ++layer) {
    // index_v_proj / index_o_proj have no published shape; every release disables them.
    if (sparse.layer_sparse[layer] && !sparse.disable_index_value[layer])
      s.error("sparse_disable_index_value",
              fmt::format("layer {} is sparse with the index value branch enabled, which is not "
                          "supported",
                          layer));
  }
}

void check_dims(const ConfigFields& text, const ModelConfig& c) {
  if (c.num_heads % c.num_kv_heads != 0)
    text.error("num_attention_heads", fmt::format("{} is not divisible by num_key_value_heads {}",
                                                  c.num_heads, c.num_kv_heads));
  if (c.rotary_dim <= 0 || c.rotary_dim % 2 != 0)
    text.error("rotary_dim", fmt::format("must be positive and even, got {}", c.rotary_dim));
  if (c.rotary_dim > c.head_dim)
    text.error("rotary_dim",
               fmt::format("{} is larger than head_dim {}", c.rotary_dim, c.head_dim));
  if (c.experts_per_tok > c.num_experts)
    text.error("num_experts_per_tok", fmt::format("{} is more than num_local_experts {}",
                                                  c.experts_per_tok, c.num_experts));
  if (!(c.rope_theta > 0)) text.error("rope_theta", "must be positive");
  if (!(c.rms_norm_eps > 0)) text.error("rms_norm_eps", "must be positive");
  if (c.max_position_embeddings <= 0) text.error("max_position_embeddings", "must be positive");
  if (c.scoring_func != "sigmoid")
    text.error("scoring_func",
               fmt::format("'{}' is not supported (only 'sigmoid')", c.scoring_func));
}

void check_consistency(const ConfigFields& text, const ModelConfig& c) {
  if (!(c.routed_scaling_factor > 0)) text.error("routed_scaling_factor", "must be positive");
  if (c.n_shared_experts < 0 || c.n_shared_experts > 1)
    text.error("n_shared_experts", fmt::format("{} is not supported (0 or 1)", c.n_shared_experts));
  if (c.n_shared_experts == 1 && c.shared_intermediate_size <= 0)
    text.error("shared_intermediate_size", "must be positive when n_shared_experts is 1");
  if (c.n_shared_experts == 0 && c.shared_intermediate_size != 0)
    text.error("shared_intermediate_size",
               fmt::format("{} but the architecture has no shared expert (n_shared_experts 0)",
                           c.shared_intermediate_size));
  bool any_dense = false;
  for (int flag : c.moe_layer) any_dense |= flag == 0;
  if (any_dense && c.dense_intermediate_size <= 0)
    text.error("dense_intermediate_size", "must be positive when a layer has a dense FFN");
}

void read_common_text_fields(const ConfigFields& text, ModelConfig& c) {
  c.hidden_size = text.positive("hidden_size");
  c.num_layers = text.positive("num_hidden_layers");
  c.num_heads = text.positive("num_attention_heads");
  c.num_kv_heads = text.positive("num_key_value_heads");
  // Required: hidden_size / num_heads would give 64 for M2, not its 128.
  c.head_dim = text.positive("head_dim");
  c.rotary_dim = read_rotary_dim(text, c.head_dim);
  c.rope_theta = read_rope_theta(text);
  reject_rope_scaling(text);
  c.rms_norm_eps = text.number("rms_norm_eps");
  c.vocab_size = text.positive("vocab_size");
  c.max_position_embeddings = text.int64("max_position_embeddings");
  c.intermediate_size = text.positive("intermediate_size");
  c.num_experts = text.positive("num_local_experts");
  c.experts_per_tok = text.positive("num_experts_per_tok");
  c.shared_intermediate_size = text.integer_or("shared_intermediate_size", 0);
  c.routed_scaling_factor = text.number_or("routed_scaling_factor", 1.0);
  c.use_routing_bias = text.boolean_or("use_routing_bias", true);
  c.scoring_func = text.string_or("scoring_func", "sigmoid");
  c.use_qk_norm = text.boolean_or("use_qk_norm", true);
  c.num_mtp_modules = text.integer_or("num_mtp_modules", 0);
  c.tie_word_embeddings = text.boolean_or("tie_word_embeddings", c.tie_word_embeddings);
  c.bos_token_id = text.token_id_or("bos_token_id", c.bos_token_id);
  c.eos_token_id = text.token_id_or("eos_token_id", c.eos_token_id);
}

void expect_string_field(const ConfigFields& text, std::string_view key, std::string_view expected,
                         const ModelConfig& c) {
  const std::string value = text.string_or(key, std::string(expected));
  if (value != expected)
    text.error(
        key, fmt::format("'{}' does not match {} (expects '{}')", value, c.architecture, expected));
}

int ModelConfig::num_moe_layers() const {
  int count = 0;
  for (int flag : moe_layer) count += flag;
  return count;
}

std::string_view arch_name(Arch arch) { return architecture_record(arch).name; }

const ArchitectureRecord& ModelConfig::architecture_record() const {
  return record != nullptr ? *record : minimax::architecture_record(arch);
}

ModelConfig parse_model_config(const json& config, const std::string& source) {
  if (!config.is_object()) fail("{}: config.json must be a JSON object", source);
  ConfigFields top(config, "", source);
  const json& archs = top.get("architectures");
  if (!archs.is_array() || archs.empty() || !archs[0].is_string())
    top.error("architectures",
              fmt::format("must be a non-empty list of strings, got {}", archs.dump()));
  ModelConfig c;
  c.raw = config;
  c.architecture = archs[0].get<std::string>();
  const ArchitectureRecord& record = find_architecture(c.architecture, source);
  c.record = &record;
  c.arch = record.arch;
  c.tensor_prefix = record.tensor_prefix;
  c.lm_head_name = record.lm_head_name;
  c.model_type = top.string_or("model_type", "");
  if (c.model_type.empty()) top.error("model_type", "required but missing");
  if (c.model_type != record.model_type)
    top.error("model_type", fmt::format("'{}' does not match architecture {} (expects '{}')",
                                        c.model_type, c.architecture, record.model_type));
  record.parse_config(top, c);
  return c;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail("{}: cannot open ({})", path,
         std::filesystem::exists(path) ? "unreadable" : "no such file");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

ModelConfig load_model_config(const std::string& checkpoint_dir) {
  std::string path = (std::filesystem::path(checkpoint_dir) / "config.json").string();
  return parse_model_config(read_json_file(path), path);
}

}  // namespace minimax
