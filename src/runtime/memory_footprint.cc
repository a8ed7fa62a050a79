// weight_footprint / kv_bytes_per_token: the tensor table's stored tensors, summed per rank.
#include "runtime/memory_footprint.h"

#include "checkpoint/hf_config_checkpoint.h"
#include "checkpoint/tensor_table.h"
#include "model/kv_cache.h"

namespace minimax {
namespace {

uint64_t stored_bytes(const StoredTensor& t) {
  uint64_t elements = 1;
  for (const int64_t d : t.shape) elements *= static_cast<uint64_t>(d);
  return (elements * static_cast<uint64_t>(dtype_bits(t.dtype)) + 7) / 8;
}

bool is_kv_head_tensor(TensorKey key) {
  return key == TensorKey::kKProj || key == TensorKey::kVProj || key == TensorKey::kKNorm;
}

// The share of `spec` rank `plan.rank` holds, as the loader cuts it (model/model_weights.cc).
double held_share(const TensorSpec& spec, const ModelConfig& config, const ParallelPlan& plan) {
  switch (plan.split_of(spec.split)) {
    case Split::kReplicated:
      return 1;
    case Split::kExpert:
      return plan.holds_expert(spec.expert) ? 1 : 0;
    case Split::kRows:
      // The rank's KV heads, a copy of one when there are more ranks than KV heads.
      if (is_kv_head_tensor(spec.id.key)) return double(plan.kv_heads) / config.num_kv_heads;
      // lm_head is cut by vocabulary rows only when they divide; else every rank has all of it.
      if (spec.id.key == TensorKey::kLmHead && config.vocab_size % plan.ranks != 0) return 1;
      return 1.0 / plan.ranks;
    case Split::kCols:
      return 1.0 / plan.ranks;
  }
  return 1;
}

// The share of a held tensor that one decoded token reads.
double read_per_token(const TensorSpec& spec, const ModelConfig& config) {
  if (spec.role == TensorRole::kRoutedExpert)
    return double(config.experts_per_tok) / config.num_experts;  // every expert is as likely
  if (spec.id.key == TensorKey::kEmbedding) return 1.0 / config.vocab_size;  // one row
  return 1;
}

}  // namespace

WeightFootprint weight_footprint(const ModelConfig& config, const QuantConfig& quant,
                                 const ParallelPlan& plan) {
  double held = 0, per_token = 0;
  for (const TensorSpec& spec : tensor_table(config)) {
    uint64_t bytes = 0;
    for (const StoredTensor& t : stored_tensors(spec, quant)) bytes += stored_bytes(t);
    const double share = double(bytes) * held_share(spec, config, plan);
    held += share;
    per_token += share * read_per_token(spec, config);
  }
  // Tied embeddings: the lm_head is the embedding read whole.
  if (config.tie_word_embeddings)
    for (const TensorSpec& spec : tensor_table(config))
      if (spec.id.key == TensorKey::kEmbedding)
        for (const StoredTensor& t : stored_tensors(spec, quant)) per_token += stored_bytes(t);
  return {static_cast<uint64_t>(held + 0.5), static_cast<uint64_t>(per_token + 0.5)};
}

int64_t kv_bytes_per_token(const ModelConfig& config, const ParallelPlan& plan, KvDtype dtype) {
  return KvBlockPool::bytes_per_block(local_model_config(config, plan), 1, dtype);
}

QuantConfig quant_config_for_layout(const nlohmann::json& hf_config, QuantScheme scheme,
                                    const std::string& source) {
  const std::string where = source + " as " + std::string(quant_scheme_name(scheme));
  return detect_quantization(hf_config_for_scheme(hf_config, scheme, source), std::nullopt, where);
}

}  // namespace minimax
