// config.json → ModelConfig: field reading with typed errors, per-arch defaults, consistency
// checks.
#include "checkpoint/model_config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "base/error.h"

namespace minimax {
namespace {

using nlohmann::json;

constexpr std::string_view kM2Architecture = "MiniMaxM2ForCausalLM";
constexpr std::string_view kM3Architecture = "MiniMaxM3SparseForConditionalGeneration";

std::string json_type(const json& value) { return value.type_name(); }

// Reads typed fields of one JSON object; every error names the file and the dotted field path.
class Fields {
 public:
  Fields(const json& object, std::string prefix, const std::string& source)
      : object_(object), prefix_(std::move(prefix)), source_(source) {}

  [[noreturn]] void error(std::string_view key, std::string_view message) const {
    fail("{}: field '{}{}': {}", source_, prefix_, key, message);
  }
  // Present and not null (HF writes null for "use the default").
  bool has(std::string_view key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  const json& get(std::string_view key) const {
    if (!has(key)) error(key, "required but missing");
    return object_.at(key);
  }

  int64_t int64(std::string_view key) const {
    const json& value = get(key);
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        error(key, "integer out of range");
      return int64_t(value.get<uint64_t>());
    }
    if (!value.is_number_integer())
      error(key, fmt::format("must be an integer, got {} {}", json_type(value), value.dump()));
    return value.get<int64_t>();
  }
  int integer(std::string_view key) const {
    int64_t value = int64(key);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
      error(key, fmt::format("integer {} out of range", value));
    return int(value);
  }
  int integer_or(std::string_view key, int fallback) const {
    return has(key) ? integer(key) : fallback;
  }
  int positive(std::string_view key) const {
    int value = integer(key);
    if (value <= 0) error(key, fmt::format("must be positive, got {}", value));
    return value;
  }
  double number(std::string_view key) const {
    const json& value = get(key);
    if (!value.is_number())
      error(key, fmt::format("must be a number, got {} {}", json_type(value), value.dump()));
    return value.get<double>();
  }
  double number_or(std::string_view key, double fallback) const {
    return has(key) ? number(key) : fallback;
  }
  bool boolean_or(std::string_view key, bool fallback) const {
    if (!has(key)) return fallback;
    const json& value = object_.at(key);
    if (!value.is_boolean())
      error(key, fmt::format("must be true or false, got {} {}", json_type(value), value.dump()));
    return value.get<bool>();
  }
  std::string string_or(std::string_view key, std::string fallback) const {
    if (!has(key)) return fallback;
    const json& value = object_.at(key);
    if (!value.is_string())
      error(key, fmt::format("must be a string, got {} {}", json_type(value), value.dump()));
    return value.get<std::string>();
  }
  const json& object(std::string_view key) const {
    const json& value = get(key);
    if (!value.is_object()) error(key, fmt::format("must be an object, got {}", json_type(value)));
    return value;
  }
  // A per-layer list of 0/1 flags; its length must be the number of layers.
  std::vector<int> layer_flags(std::string_view key, int num_layers) const {
    const json& value = get(key);
    if (!value.is_array())
      error(key, fmt::format("must be a list of 0/1 per layer, got {}", json_type(value)));
    if (int(value.size()) != num_layers)
      error(key,
            fmt::format("has {} entries but num_hidden_layers is {}", value.size(), num_layers));
    std::vector<int> flags;
    for (size_t i = 0; i < value.size(); ++i) {
      const json& item = value[i];
      if (!item.is_number_integer() || (item.get<int64_t>() != 0 && item.get<int64_t>() != 1))
        error(key, fmt::format("entry {} must be 0 or 1, got {}", i, item.dump()));
      flags.push_back(item.get<int>());
    }
    return flags;
  }
  // An id that HF writes either as an int or as a list of ints (eos); the first one is kept.
  int token_id_or(std::string_view key, int fallback) const {
    if (!has(key)) return fallback;
    const json& value = object_.at(key);
    const json& first = value.is_array() && !value.empty() ? value[0] : value;
    if (!first.is_number_integer())
      error(key, fmt::format("must be a token id or a list of them, got {}", value.dump()));
    return first.get<int>();
  }

  const std::string& prefix() const { return prefix_; }
  const std::string& source() const { return source_; }

 private:
  const json& object_;
  std::string prefix_;
  const std::string& source_;
};

// rotary_dim may be written directly (M2, M3) or as a fraction of head_dim (newer HF exports, in
// `partial_rotary_factor` or `rope_parameters`); when both are present they must agree. A loader
// that ignores them would rotate all head dims (spec/model.md §6 item 1).
int read_rotary_dim(const Fields& text, int head_dim) {
  std::optional<int> from_dim;
  if (text.has("rotary_dim")) from_dim = text.integer("rotary_dim");
  std::optional<double> factor;
  std::string factor_field = "partial_rotary_factor";
  if (text.has("partial_rotary_factor")) {
    factor = text.number("partial_rotary_factor");
  } else if (text.has("rope_parameters")) {
    Fields rope(text.object("rope_parameters"), text.prefix() + "rope_parameters.", text.source());
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
double read_rope_theta(const Fields& text) {
  std::optional<double> nested;
  if (text.has("rope_parameters")) {
    Fields rope(text.object("rope_parameters"), text.prefix() + "rope_parameters.", text.source());
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
void reject_rope_scaling(const Fields& text) {
  auto check = [&](std::string_view key) {
    if (!text.has(key)) return;
    Fields scaling(text.object(key), text.prefix() + std::string(key) + ".", text.source());
    std::string type = scaling.string_or("rope_type", scaling.string_or("type", "default"));
    if (type != "default")
      scaling.error("rope_type", fmt::format("'{}' RoPE scaling is not supported", type));
  };
  check("rope_scaling");
  check("rope_parameters");
}

void read_sparse_attention(const Fields& text, ModelConfig& config) {
  SparseAttentionConfig& sparse = config.sparse;
  sparse.layer_sparse.assign(config.num_layers, 0);
  sparse.disable_index_value.assign(config.num_layers, 0);
  if (!text.has("sparse_attention_config")) return;
  Fields s(text.object("sparse_attention_config"), text.prefix() + "sparse_attention_config.",
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

std::string expected_act(Arch arch) { return arch == Arch::kM2 ? "silu" : "swigluoai"; }

// Checks on the dimensions alone, before the per-layer lists that depend on them.
void check_dims(const Fields& text, const ModelConfig& c) {
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

// Checks across the per-arch fields.
void check_consistency(const Fields& text, const ModelConfig& c) {
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

ModelConfig parse_text_fields(const Fields& text, ModelConfig c) {
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

  std::string act = text.string_or("hidden_act", expected_act(c.arch));
  if (act != expected_act(c.arch))
    text.error("hidden_act", fmt::format("'{}' does not match {} (expects '{}')", act,
                                         c.architecture, expected_act(c.arch)));
  c.activation = c.arch == Arch::kM2 ? Activation::kSilu : Activation::kSwigluOai;

  std::string qk_default = c.arch == Arch::kM2 ? "per_layer" : "per_head";
  std::string qk_type = text.string_or("qk_norm_type", qk_default);
  if (qk_type != qk_default)
    text.error("qk_norm_type", fmt::format("'{}' does not match {} (expects '{}')", qk_type,
                                           c.architecture, qk_default));
  c.qk_norm = c.arch == Arch::kM2 ? QkNormKind::kPerLayer : QkNormKind::kPerHead;
  check_dims(text, c);
  return c;
}

void parse_m2(const Fields& text, ModelConfig& c) {
  c.tensor_prefix = "model.";
  c.lm_head_name = "lm_head.weight";
  c.use_gemma_norm = text.boolean_or("use_gemma_norm", false);
  if (c.use_gemma_norm) text.error("use_gemma_norm", "M2 uses plain RMSNorm weights, not (1 + w)");
  c.moe_layer = text.has("moe_layer_freq") ? text.layer_flags("moe_layer_freq", c.num_layers)
                                           : std::vector<int>(c.num_layers, 1);
  if (text.has("attn_type_list")) {
    // 0 meant MiniMax-01's lightning attention; M2 has softmax attention in every layer.
    std::vector<int> attn = text.layer_flags("attn_type_list", c.num_layers);
    for (int layer = 0; layer < c.num_layers; ++layer)
      if (attn[layer] != 1)
        text.error("attn_type_list",
                   fmt::format("layer {} asks for linear attention (0), not supported", layer));
  }
  c.n_shared_experts = text.integer_or("n_shared_experts", 0);
  c.dense_intermediate_size = text.integer_or("dense_intermediate_size", 0);
  if (text.has("sparse_attention_config")) {
    Fields s(text.object("sparse_attention_config"), "sparse_attention_config.", text.source());
    if (s.boolean_or("use_sparse_attention", false))
      s.error("use_sparse_attention", "M2 has no sparse attention (an M3 field)");
  }
  read_sparse_attention(text, c);
}

void parse_m3(const Fields& text, ModelConfig& c) {
  c.tensor_prefix = "language_model.model.";
  c.lm_head_name = "language_model.lm_head.weight";
  c.use_gemma_norm = text.boolean_or("use_gemma_norm", true);
  c.moe_layer = text.layer_flags("moe_layer_freq", c.num_layers);
  c.n_shared_experts = text.integer_or("n_shared_experts", 0);
  c.dense_intermediate_size = text.integer_or("dense_intermediate_size", 0);
  c.swiglu_alpha = text.number_or("swiglu_alpha", 1.702);
  c.swiglu_limit = text.number_or("swiglu_limit", 7.0);
  // Absent in the release config; the OAI form's up-branch offset is 1 (vLLM PR #45738).
  c.swiglu_beta = text.number_or("swiglu_beta", 1.0);
  if (!(c.swiglu_limit > 0)) text.error("swiglu_limit", "must be positive");
  read_sparse_attention(text, c);
}

}  // namespace

int ModelConfig::num_moe_layers() const {
  int count = 0;
  for (int flag : moe_layer) count += flag;
  return count;
}

std::string_view arch_name(Arch arch) { return arch == Arch::kM2 ? "M2" : "M3"; }

ModelConfig parse_model_config(const json& config, const std::string& source) {
  if (!config.is_object()) fail("{}: config.json must be a JSON object", source);
  Fields top(config, "", source);
  const json& archs = top.get("architectures");
  if (!archs.is_array() || archs.empty() || !archs[0].is_string())
    top.error("architectures",
              fmt::format("must be a non-empty list of strings, got {}", archs.dump()));
  ModelConfig c;
  c.raw = config;
  c.architecture = archs[0].get<std::string>();
  std::string expected_type;
  if (c.architecture == kM2Architecture) {
    c.arch = Arch::kM2;
    expected_type = "minimax_m2";
  } else if (c.architecture == kM3Architecture) {
    c.arch = Arch::kM3;
    expected_type = "minimax_m3_vl";
  } else {
    top.error("architectures", fmt::format("'{}' is not supported (supported: {}, {})",
                                           c.architecture, kM2Architecture, kM3Architecture));
  }
  c.model_type = top.string_or("model_type", "");
  if (c.model_type.empty()) top.error("model_type", "required but missing");
  if (c.model_type != expected_type)
    top.error("model_type", fmt::format("'{}' does not match architecture {} (expects '{}')",
                                        c.model_type, c.architecture, expected_type));

  if (c.arch == Arch::kM2) {
    c = parse_text_fields(top, std::move(c));
    parse_m2(top, c);
    check_consistency(top, c);
    return c;
  }
  // M3 is a vision-language checkpoint: the language model's fields sit under text_config; a few
  // (tie_word_embeddings, token ids) may also appear at the top level.
  c.tie_word_embeddings = top.boolean_or("tie_word_embeddings", false);
  c.bos_token_id = top.token_id_or("bos_token_id", -1);
  c.eos_token_id = top.token_id_or("eos_token_id", -1);
  Fields text(top.object("text_config"), "text_config.", source);
  c = parse_text_fields(text, std::move(c));
  parse_m3(text, c);
  check_consistency(text, c);
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
