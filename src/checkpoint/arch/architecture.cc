// The registry of architecture records and the MiniMax tensor spelling the records share.
#include "checkpoint/arch/architecture.h"

#include <array>
#include <charconv>

#include "base/error.h"

namespace minimax {
namespace {

// A record's file defines it; this list is the one line a new architecture adds here (a static
// library drops object files nothing references, so self-registration would not survive linking).
const std::array<const ArchitectureRecord*, 2>& records() {
  static const std::array<const ArchitectureRecord*, 2> list = {&minimax_m2_record(),
                                                                &minimax_m3_record()};
  return list;
}

// Module path after "layers.N." of every per-layer key but the routed experts.
std::string_view layer_suffix(TensorKey key) {
  switch (key) {
    case TensorKey::kInputNorm:
      return "input_layernorm.weight";
    case TensorKey::kPostNorm:
      return "post_attention_layernorm.weight";
    case TensorKey::kQProj:
      return "self_attn.q_proj.weight";
    case TensorKey::kKProj:
      return "self_attn.k_proj.weight";
    case TensorKey::kVProj:
      return "self_attn.v_proj.weight";
    case TensorKey::kOProj:
      return "self_attn.o_proj.weight";
    case TensorKey::kQNorm:
      return "self_attn.q_norm.weight";
    case TensorKey::kKNorm:
      return "self_attn.k_norm.weight";
    case TensorKey::kIndexQProj:
      return "self_attn.index_q_proj.weight";
    case TensorKey::kIndexKProj:
      return "self_attn.index_k_proj.weight";
    case TensorKey::kIndexQNorm:
      return "self_attn.index_q_norm.weight";
    case TensorKey::kIndexKNorm:
      return "self_attn.index_k_norm.weight";
    case TensorKey::kRouter:
      return "block_sparse_moe.gate.weight";
    case TensorKey::kRouterBias:
      return "block_sparse_moe.e_score_correction_bias";
    case TensorKey::kSharedGate:
      return "block_sparse_moe.shared_experts.gate_proj.weight";
    case TensorKey::kSharedUp:
      return "block_sparse_moe.shared_experts.up_proj.weight";
    case TensorKey::kSharedDown:
      return "block_sparse_moe.shared_experts.down_proj.weight";
    case TensorKey::kDenseGate:
      return "mlp.gate_proj.weight";
    case TensorKey::kDenseUp:
      return "mlp.up_proj.weight";
    case TensorKey::kDenseDown:
      return "mlp.down_proj.weight";
    case TensorKey::kEmbedding:
    case TensorKey::kFinalNorm:
    case TensorKey::kLmHead:
    case TensorKey::kExpertGate:
    case TensorKey::kExpertUp:
    case TensorKey::kExpertDown:
      break;
  }
  return {};
}

// Routed experts are "block_sparse_moe.experts.E.<projection>.weight" with HF Mixtral's w1 (gate),
// w3 (up), w2 (down).
constexpr std::string_view kExperts = "block_sparse_moe.experts.";
std::string_view expert_projection(TensorKey key) {
  switch (key) {
    case TensorKey::kExpertGate:
      return "w1.weight";
    case TensorKey::kExpertUp:
      return "w3.weight";
    case TensorKey::kExpertDown:
      return "w2.weight";
    default:
      return {};
  }
}

bool consume(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// Consumes "N." and returns N; -1 (text unchanged) when malformed.
int consume_index(std::string_view& text) {
  const size_t dot = text.find('.');
  if (dot == 0 || dot == std::string_view::npos) return -1;
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + dot, value);
  if (ec != std::errc() || end != text.data() + dot || value < 0) return -1;
  text.remove_prefix(dot + 1);
  return value;
}

}  // namespace

std::span<const ArchitectureRecord* const> registered_architectures() { return records(); }

const ArchitectureRecord& find_architecture(std::string_view architecture,
                                            const std::string& source) {
  std::string known;
  for (const ArchitectureRecord* r : records()) {
    if (r->architecture == architecture) return *r;
    known += (known.empty() ? "" : ", ") + std::string(r->architecture);
  }
  fail("{}: field 'architectures': '{}' is not supported (registered: {})", source, architecture,
       known);
}

const ArchitectureRecord& architecture_record(Arch arch) {
  for (const ArchitectureRecord* r : records())
    if (r->arch == arch) return *r;
  fail("architecture_record: no record of family {}", static_cast<int>(arch));
}

std::string minimax_tensor_name(const ArchitectureRecord& record, const TensorId& id) {
  const std::string prefix(record.tensor_prefix);
  switch (id.key) {
    case TensorKey::kEmbedding:
      return prefix + "embed_tokens.weight";
    case TensorKey::kFinalNorm:
      return prefix + "norm.weight";
    case TensorKey::kLmHead:
      return std::string(record.lm_head_name);
    default:
      break;
  }
  std::string name = prefix + "layers." + std::to_string(id.layer) + ".";
  if (key_has_expert(id.key))
    return name + std::string(kExperts) + std::to_string(id.expert) + "." +
           std::string(expert_projection(id.key));
  return name + std::string(layer_suffix(id.key));
}

std::optional<int> minimax_layer_of_name(const ArchitectureRecord& record, std::string_view name) {
  if (!consume(name, record.tensor_prefix) || !consume(name, "layers.")) return std::nullopt;
  const int layer = consume_index(name);
  if (layer < 0) return std::nullopt;
  return layer;
}

std::optional<TensorId> parse_minimax_tensor_name(const ArchitectureRecord& record,
                                                  std::string_view name) {
  if (name == record.lm_head_name) return TensorId{TensorKey::kLmHead};
  if (!consume(name, record.tensor_prefix)) return std::nullopt;
  if (name == "embed_tokens.weight") return TensorId{TensorKey::kEmbedding};
  if (name == "norm.weight") return TensorId{TensorKey::kFinalNorm};
  if (!consume(name, "layers.")) return std::nullopt;
  const int layer = consume_index(name);
  if (layer < 0) return std::nullopt;
  if (consume(name, kExperts)) {
    const int expert = consume_index(name);
    if (expert < 0) return std::nullopt;
    for (TensorKey key : {TensorKey::kExpertGate, TensorKey::kExpertUp, TensorKey::kExpertDown})
      if (name == expert_projection(key)) return TensorId{key, layer, expert};
    return std::nullopt;
  }
  for (int k = 0; k < kNumTensorKeys; ++k) {
    const auto key = static_cast<TensorKey>(k);
    const std::string_view suffix = layer_suffix(key);
    if (!suffix.empty() && name == suffix) return TensorId{key, layer};
  }
  return std::nullopt;
}

}  // namespace minimax
