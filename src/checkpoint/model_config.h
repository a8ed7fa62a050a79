// Typed view of a MiniMax-M2 / MiniMax-M3 `config.json` (spec/model.md §1), validated on parse.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax {

// The architecture family; everything the engine knows about one lives in its record
// (checkpoint/arch/architecture.h).
enum class Arch { kM2, kM3 };
struct ArchitectureRecord;
// M2 normalises q/k over the whole flattened projection (6144 / 1024 values, a weight per value);
// M3 normalises each 128-wide head with one shared [head_dim] weight. Under tensor parallelism only
// kPerLayer needs the sum of squares reduced across ranks.
enum class QkNormKind { kPerLayer, kPerHead };
// kSilu: silu(gate) * up. kSwigluOai:
// min(g,limit)·sigmoid(alpha·min(g,limit))·(clamp(u,±limit)+beta).
enum class Activation { kSilu, kSwigluOai };

// M3 block-sparse attention (MSA). For M2, or with use_sparse_attention false, `enabled` is false
// and both per-layer lists are all zeros (one entry per layer).
struct SparseAttentionConfig {
  bool enabled = false;
  int index_dim = 0, num_index_heads = 0, block_size = 0, topk_blocks = 0;
  std::string score_type;
  int init_blocks = 0, local_blocks = 0;
  std::vector<int> layer_sparse;         // per layer 0/1: 1 = index branch + block-sparse attention
  std::vector<int> disable_index_value;  // per layer 0/1 as written in the file
};

struct ModelConfig {
  Arch arch = Arch::kM2;
  std::string architecture;  // the `architectures[0]` string
  std::string model_type;    // "minimax_m2" or "minimax_m3_vl"
  int hidden_size = 0, num_layers = 0, num_heads = 0, num_kv_heads = 0, head_dim = 0,
      rotary_dim = 0;
  double rope_theta = 0, rms_norm_eps = 0;
  int vocab_size = 0;
  int64_t max_position_embeddings = 0;
  int intermediate_size = 0;  // one routed expert's FFN width
  int num_experts = 0, experts_per_tok = 0;
  int n_shared_experts = 0, shared_intermediate_size = 0, dense_intermediate_size = 0;
  std::vector<int> moe_layer;  // per layer: 1 = MoE, 0 = dense FFN
  double routed_scaling_factor = 1.0;
  bool use_routing_bias = true;
  std::string scoring_func;
  bool use_gemma_norm = false;  // RMSNorm weight applied as (1 + w)
  bool use_qk_norm = true;
  QkNormKind qk_norm = QkNormKind::kPerLayer;
  Activation activation = Activation::kSilu;
  double swiglu_alpha = 0, swiglu_limit = 0, swiglu_beta = 0;  // kSwigluOai only
  SparseAttentionConfig sparse;
  int num_mtp_modules = 0;  // MTP layers the checkpoint may carry; the engine skips them
  bool tie_word_embeddings = false;
  // As written in config.json, -1 when absent. These may be wrong (M2.7 says 1 / 2); the ids that
  // count come from generation_config.json and the tokenizer (spec/model.md §6 item 11).
  int bos_token_id = -1, eos_token_id = -1;
  // The record `architecture` names (set by parse_model_config; null in a hand-built config,
  // which then uses its family's record). Prefix and lm_head name are the record's.
  const ArchitectureRecord* record = nullptr;
  std::string tensor_prefix;  // "model." (M2) or "language_model.model." (M3)
  std::string lm_head_name;   // "lm_head.weight" or "language_model.lm_head.weight"
  nlohmann::json raw;         // the whole config.json

  bool is_moe_layer(int layer) const { return moe_layer.at(layer) != 0; }
  bool is_sparse_layer(int layer) const { return sparse.layer_sparse.at(layer) != 0; }
  int num_moe_layers() const;
  const ArchitectureRecord& architecture_record() const;
};

std::string_view arch_name(Arch arch);  // "M2" / "M3" (the record's short name)

// Validates and converts a parsed config.json. `source` names the file in error messages. Unknown
// extra keys are ignored (real configs carry many); missing required fields, wrong JSON types and
// contradictions throw Error("<source>: field '<path>': ...").
ModelConfig parse_model_config(const nlohmann::json& config, const std::string& source);
// Reads and parses DIR/config.json.
ModelConfig load_model_config(const std::string& checkpoint_dir);

// Reads a JSON file; Error names the path when it is missing or not valid JSON.
nlohmann::json read_json_file(const std::string& path);

}  // namespace minimax
