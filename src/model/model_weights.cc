// The model's weights from the canonical tensor table: each entry is looked up by its id and read
// once; no tensor name is spelled here. Under a parallel plan each weight is cut to this rank's
// share by the table's split rule, and routed experts of other ranks are never opened.
#include "model/model_weights.h"

#include <chrono>
#include <optional>

#include "base/error.h"
#include "base/huge_pages.h"
#include "base/log.h"
#include "base/mapped_file.h"
#include "base/progress.h"
#include "checkpoint/tensor_table.h"
#include "model/weight_loader.h"
#include "model/weight_shard.h"

namespace minimax {

namespace {

class ModelLoader {
 public:
  ModelLoader(const TensorStore& store, const ModelConfig& config, const QuantConfig& quant,
              const LoadOptions& options, ModelWeights& out)
      : config_(config),
        options_(options),
        plan_(options.plan),
        out_(out),
        loader_(store, quant, &out.owned),
        sharder_(&out.owned),
        table_(config) {}

  void load() {
    out_.embedding = keep(loader_.matrix(table_.at({TensorKey::kEmbedding})));
    for (int l = 0; l < config_.num_layers; ++l) out_.layers.push_back(layer(l));
    out_.final_norm = vector(TensorKey::kFinalNorm, -1);
    out_.vocab_size = config_.vocab_size;
    const TensorSpec& head = table_.at({TensorKey::kLmHead});
    const WeightView whole_head =
        config_.tie_word_embeddings ? out_.embedding : loader_.linear(head);
    // By vocabulary rows when they divide (the ranks' logits are gathered); else every rank
    // computes all of them.
    if (plan_.split_of(head.split) == Split::kRows && whole_head.rows % plan_.ranks == 0) {
      out_.lm_head = sharder_.row_share(whole_head, plan_.rank, plan_.ranks, head.name);
      out_.vocab_begin = plan_.rank * out_.lm_head.rows;
    } else {
      out_.lm_head = whole_head;
    }
    if (!config_.tie_word_embeddings) keep(out_.lm_head);
  }

 private:
  // Counts the bytes a kept view reads.
  WeightView keep(const WeightView& w) {
    out_.mapped_bytes += weight_view_bytes(w);
    if (w.rows > 0 && w.data != nullptr)
      out_.kept.emplace_back(
          w.data, static_cast<size_t>((w.rows - 1) * weight_data_stride(w) + weight_row_bytes(w)));
    return w;
  }

  // A linear weight cut by its split rule in this mode (attention has its own cuts below).
  WeightView linear(TensorKey key, int l, int expert = -1) {
    const TensorSpec& spec = table_.at({key, l, expert});
    const WeightView w = loader_.linear(spec);
    switch (plan_.split_of(spec.split)) {
      case Split::kRows:
        return keep(sharder_.row_share(w, plan_.rank, plan_.ranks, spec.name));
      case Split::kCols:
        return keep(sharder_.col_share(w, plan_.rank, plan_.ranks, spec.name));
      case Split::kReplicated:
      case Split::kExpert:
        break;
    }
    return keep(w);
  }

  std::vector<float> vector(TensorKey key, int l) {
    std::vector<float> v = loader_.vector(table_.at({key, l}));
    out_.mapped_bytes += v.size() * sizeof(float);
    return v;
  }

  // Rows [first·head_dim, (first + count)·head_dim) of a head-major weight or vector.
  WeightView head_rows(TensorKey key, int l, int first, int count) {
    const TensorSpec& spec = table_.at({key, l});
    const int64_t hd = config_.head_dim;
    return keep(sharder_.rows(loader_.linear(spec), first * hd, count * hd, spec.name));
  }
  std::vector<float> head_part(const std::vector<float>& v, int first, int count) {
    const int64_t hd = config_.head_dim;
    return {v.begin() + first * hd, v.begin() + (first + count) * hd};
  }

  FfnWeights ffn(TensorKey gate, TensorKey up, TensorKey down, int l, bool dequant) {
    FfnWeights f{linear(gate, l), linear(up, l), linear(down, l)};
    if (dequant) f = {decode(f.gate), decode(f.up), decode(f.down)};
    return f;
  }
  WeightView decode(const WeightView& w) {
    return is_quantized_format(w.format) ? loader_.decoded_bf16(w) : w;
  }

  void attention(int l, AttentionWeights& a) {
    using K = TensorKey;
    if (plan_.tensor_parallel()) {
      // This rank's query heads, the KV heads they read, and o_proj's matching input columns.
      a.q = head_rows(K::kQProj, l, plan_.head_begin, plan_.heads);
      a.k = head_rows(K::kKProj, l, plan_.kv_head_begin, plan_.kv_heads);
      a.v = head_rows(K::kVProj, l, plan_.kv_head_begin, plan_.kv_heads);
      const TensorSpec& o = table_.at({K::kOProj, l});
      const int64_t hd = config_.head_dim;
      a.o = keep(sharder_.cols(loader_.linear(o), plan_.head_begin * hd, plan_.heads * hd, o.name));
    } else {
      a.q = linear(K::kQProj, l);
      a.k = linear(K::kKProj, l);
      a.v = linear(K::kVProj, l);
      a.o = linear(K::kOProj, l);
    }
    if (config_.use_qk_norm) {
      a.q_norm = vector(K::kQNorm, l);
      a.k_norm = vector(K::kKNorm, l);
      // M2's weight has one entry per element of the whole projection: the rank's heads' part.
      if (plan_.tensor_parallel() && config_.qk_norm == QkNormKind::kPerLayer) {
        a.q_norm = head_part(a.q_norm, plan_.head_begin, plan_.heads);
        a.k_norm = head_part(a.k_norm, plan_.kv_head_begin, plan_.kv_heads);
      }
    }
  }

  LayerWeights layer(int l) {
    using K = TensorKey;
    LayerWeights w;
    w.sparse = config_.is_sparse_layer(l);
    w.moe = config_.is_moe_layer(l);
    w.input_norm = vector(K::kInputNorm, l);
    w.post_norm = vector(K::kPostNorm, l);
    AttentionWeights& a = w.attn;
    attention(l, a);
    if (w.sparse) {
      a.index_q = linear(K::kIndexQProj, l);
      a.index_k = linear(K::kIndexKProj, l);
      a.index_q_norm = vector(K::kIndexQNorm, l);
      a.index_k_norm = vector(K::kIndexKNorm, l);
    }
    if (!w.moe) {
      w.dense = ffn(K::kDenseGate, K::kDenseUp, K::kDenseDown, l, false);
      return w;
    }
    MoeWeights& moe = w.moe_weights;
    moe.router = keep(loader_.matrix(table_.at({K::kRouter, l})));
    if (config_.use_routing_bias) moe.bias = vector(K::kRouterBias, l);
    moe.experts.resize(config_.num_experts);
    for (int e = 0; e < config_.num_experts; ++e) {
      if (!plan_.holds_expert(e)) continue;  // another rank's: never opened
      ExpertWeights ew{linear(K::kExpertGate, l, e), linear(K::kExpertUp, l, e),
                       linear(K::kExpertDown, l, e)};
      if (options_.dequant_experts) ew = {decode(ew.gate), decode(ew.up), decode(ew.down)};
      moe.experts[e] = ew;
    }
    moe.has_shared = config_.n_shared_experts > 0;
    if (moe.has_shared)
      moe.shared = ffn(K::kSharedGate, K::kSharedUp, K::kSharedDown, l, options_.dequant_experts);
    return w;
  }

  const ModelConfig& config_;
  const LoadOptions& options_;
  const ParallelPlan& plan_;
  ModelWeights& out_;
  WeightLoader loader_;
  WeightSharder sharder_;
  TensorTable table_;
};

// Names in the checkpoint that the table does not know and the engine does not skip on purpose:
// reported, not fatal (releases carry extras such as KV-cache scales).
void report_unused(const TensorStore& store, const ModelConfig& config) {
  size_t unknown = 0;
  std::string first;
  for (const std::string& name : store.names()) {
    if (classify_tensor(name, config) != TensorRole::kUnknown) continue;
    if (unknown++ == 0) first = name;
  }
  if (unknown > 0)
    log_warn("{}: {} tensor(s) not used by the model, e.g. '{}'", store.dir(), unknown, first);
}

}  // namespace

bool should_prefault(uint64_t weight_bytes, int64_t available_bytes) {
  return available_bytes <= 0 || weight_bytes <= static_cast<uint64_t>(available_bytes);
}

uint64_t kept_bytes(const ModelWeights& weights) {
  uint64_t total = 0;
  for (const auto& span : weights.kept) total += span.size();
  return total;
}

void prefault_weights(const ModelWeights& weights, bool show_progress) {
  constexpr size_t kChunk = size_t{64} << 20;  // progress granularity
  std::optional<Progress> progress;
  if (show_progress) {
    progress.emplace("load weights", kept_bytes(weights));
    progress->show_after(std::chrono::seconds(1));
  }
  for (const auto& span : weights.kept)
    for (size_t offset = 0; offset < span.size(); offset += kChunk) {
      const size_t n = std::min(kChunk, span.size() - offset);
      touch_pages(span.data() + offset, n);
      if (progress) progress->add(n);
    }
  if (progress) progress->finish();
}

uint64_t move_weights_to_huge_pages(const ModelWeights& weights, const TensorStore& store,
                                    bool show_progress) {
  std::vector<std::span<const uint8_t>> regions;
  for (size_t i = 0; i < store.num_shards(); ++i) regions.push_back(store.shard(i).mapping());
  std::optional<Progress> progress;
  if (show_progress) {
    progress.emplace("load weights", kept_bytes(weights));
    progress->show_after(std::chrono::seconds(1));
  }
  const uint64_t moved = move_to_huge_pages(weights.kept, regions, [&](uint64_t bytes) {
    if (progress) progress->add(bytes);
  });
  if (progress) progress->finish();
  return moved;
}

ModelWeights load_model_weights(const TensorStore& store, const ModelConfig& config,
                                const QuantConfig& quant, const LoadOptions& options) {
  ModelWeights out;
  out.scheme = quant.scheme;
  out.dequant_experts = options.dequant_experts;
  ModelLoader(store, config, quant, options, out).load();
  report_unused(store, config);
  return out;
}

}  // namespace minimax
