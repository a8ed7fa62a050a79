// EAGLE-3 draft head: loading the published layout and the one-layer forward pass
// (model/eagle3_head.h; the math with its source is docs/eagle3.md).
#include "model/eagle3_head.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "base/error.h"
#include "formats/safetensors.h"
#include "model/weight_loader.h"

namespace minimax {
namespace {

// Every tensor name of the published layout. embed_tokens is optional (the target's is used),
// d2t and t2d are optional when the draft vocabulary is the target's.
const std::set<std::string>& known_names() {
  static const std::set<std::string> names = {
      "fc.weight",
      "midlayer.input_layernorm.weight",
      "midlayer.hidden_norm.weight",
      "midlayer.self_attn.q_proj.weight",
      "midlayer.self_attn.k_proj.weight",
      "midlayer.self_attn.v_proj.weight",
      "midlayer.self_attn.o_proj.weight",
      "midlayer.post_attention_layernorm.weight",
      "midlayer.mlp.gate_proj.weight",
      "midlayer.mlp.up_proj.weight",
      "midlayer.mlp.down_proj.weight",
      "norm.weight",
      "lm_head.weight",
      "embed_tokens.weight",
      "d2t",
      "t2d",
  };
  return names;
}

TensorSpec spec(std::string name, std::vector<int64_t> shape) {
  TensorSpec s;
  s.name = std::move(name);
  s.shape = std::move(shape);
  return s;
}

}  // namespace

Eagle3Head::~Eagle3Head() = default;

int64_t Eagle3Head::tap_width() const {
  return static_cast<int64_t>(config_.tap_layers.size()) * config_.target_hidden_size;
}

std::unique_ptr<Eagle3Head> Eagle3Head::load(const std::string& dir, const Model& target,
                                             bool batch_invariant) {
  const ModelConfig& t = target.config();
  if (!target.backend().host_memory())
    fail("{}: the EAGLE-3 head runs on host-memory backends only (target backend '{}')", dir,
         target.backend().name());
  std::unique_ptr<Eagle3Head> head(new Eagle3Head());
  head->config_ = load_eagle3_config(dir, t.num_layers, t.hidden_size, t.vocab_size);
  const Eagle3Config& c = head->config_;
  head->store_ = std::make_unique<TensorStore>(dir);
  const TensorStore& store = *head->store_;
  for (const std::string& name : store.names())
    if (!known_names().contains(name))
      fail(
          "{}: tensor '{}' is not part of the EAGLE-3 head layout (fc, midlayer.*, norm, "
          "lm_head, d2t, t2d, embed_tokens)",
          dir, name);
  QuantConfig none;
  WeightLoader loader(store, none, &head->owned_);
  const int64_t H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size,
                Vd = c.draft_vocab_size, q_width = int64_t{c.num_heads} * c.head_dim,
                kv_width = int64_t{c.num_kv_heads} * c.head_dim;
  head->fc_ = loader.matrix(spec("fc.weight", {H, head->tap_width()}));
  head->q_ = loader.matrix(spec("midlayer.self_attn.q_proj.weight", {q_width, 2 * H}));
  head->k_ = loader.matrix(spec("midlayer.self_attn.k_proj.weight", {kv_width, 2 * H}));
  head->v_ = loader.matrix(spec("midlayer.self_attn.v_proj.weight", {kv_width, 2 * H}));
  head->o_ = loader.matrix(spec("midlayer.self_attn.o_proj.weight", {H, q_width}));
  head->gate_ = loader.matrix(spec("midlayer.mlp.gate_proj.weight", {I, H}));
  head->up_ = loader.matrix(spec("midlayer.mlp.up_proj.weight", {I, H}));
  head->down_ = loader.matrix(spec("midlayer.mlp.down_proj.weight", {H, I}));
  head->lm_head_ = loader.matrix(spec("lm_head.weight", {Vd, H}));
  head->input_norm_ = loader.vector(spec("midlayer.input_layernorm.weight", {H}));
  head->hidden_norm_ = loader.vector(spec("midlayer.hidden_norm.weight", {H}));
  head->post_norm_ = loader.vector(spec("midlayer.post_attention_layernorm.weight", {H}));
  head->final_norm_ = loader.vector(spec("norm.weight", {H}));
  if (store.find("embed_tokens.weight")) {
    head->embedding_ = loader.matrix(spec("embed_tokens.weight", {V, H}));
  } else {
    if (t.hidden_size != H)
      fail(
          "{}: the head has no 'embed_tokens.weight' and is {} wide, so it cannot borrow the "
          "target's {}-wide embedding",
          dir, H, t.hidden_size);
    head->embedding_ = target.weights().embedding;
  }
  head->d2t_.assign(static_cast<size_t>(Vd), 0);
  if (TensorRef d2t = store.find("d2t")) {
    if (d2t.info->dtype != DType::kI64 || d2t.info->shape != std::vector<int64_t>{Vd})
      fail("{}: tensor 'd2t' is {} {}, expected I64 [{}] (draft id → target id offsets)",
           d2t.file->path(), dtype_name(d2t.info->dtype), shape_string(d2t.info->shape), Vd);
    std::memcpy(head->d2t_.data(), d2t.data().data(), static_cast<size_t>(Vd) * sizeof(int64_t));
    for (int64_t i = 0; i < Vd; ++i)
      if (i + head->d2t_[i] < 0 || i + head->d2t_[i] >= V)
        fail("{}: 'd2t' maps draft id {} to {}, outside the target's {} tokens", d2t.file->path(),
             i, i + head->d2t_[i], V);
  } else if (Vd != V) {
    fail("{}: 'draft_vocab_size' ({}) differs from 'vocab_size' ({}) but the head has no 'd2t'",
         dir, Vd, V);
  }
  if (TensorRef t2d = store.find("t2d"))
    if (t2d.info->dtype != DType::kBOOL || t2d.info->shape != std::vector<int64_t>{V})
      fail("{}: tensor 't2d' is {} {}, expected BOOL [{}]", t2d.file->path(),
           dtype_name(t2d.info->dtype), shape_string(t2d.info->shape), V);
  const ModelOptions& options = target.options();
  BackendOptions kernels{options.cpu};
  kernels.cpu.batch_invariant = batch_invariant;
  head->backend_ = options.kernels != nullptr ? create_host_backend(*options.kernels)
                                              : create_backend(options.backend, kernels);
  head->pool_ = options.pool;
  return head;
}

void Eagle3Head::reserve(Eagle3Cache& cache, int64_t slots) {
  if (slots <= cache.capacity_) return;
  const int64_t capacity = std::max<int64_t>(slots, 2 * cache.capacity_ + 64);
  const int64_t width = int64_t{config_.num_kv_heads} * config_.head_dim;
  for (DeviceBuffer* buffer : {&cache.k_, &cache.v_}) {
    DeviceBuffer grown =
        backend_->allocate(static_cast<size_t>(capacity * width) * sizeof(float), "EAGLE-3 KV");
    if (cache.capacity_ > 0)
      backend_->ops().copy(grown.as<float>(), buffer->as<float>(), cache.capacity_ * width);
    *buffer = std::move(grown);
  }
  cache.capacity_ = capacity;
}

int32_t Eagle3Head::forward(Eagle3Cache& cache, std::span<const int32_t> tokens,
                            std::span<const int32_t> slots, std::span<const float> hidden,
                            int64_t width, std::vector<float>& next_hidden) {
  Rows rows{.cache = &cache,
            .tokens = tokens,
            .slots = slots,
            .hidden = hidden,
            .next_hidden = &next_hidden};
  forward_batch(std::span(&rows, 1), width);
  return rows.draft;
}

void Eagle3Head::forward_batch(std::span<Rows> batch, int64_t width) {
  if (width != tap_width() && width != config_.hidden_size)
    fail("EAGLE-3 head: rows of width {}, expected {} (taps) or {} (chained)", width, tap_width(),
         config_.hidden_size);
  // Each sequence's rows start at first[s] of the pass, T rows in all.
  std::vector<int64_t> first;
  int64_t T = 0;
  for (Rows& r : batch) {
    const auto n = static_cast<int64_t>(r.tokens.size());
    if (n == 0 || r.slots.size() != r.tokens.size() ||
        r.hidden.size() != static_cast<size_t>(n * width) || r.cache == nullptr ||
        r.next_hidden == nullptr)
      fail("EAGLE-3 head: {} tokens, {} slots and {} hidden values of width {} do not fit", n,
           r.slots.size(), r.hidden.size(), width);
    reserve(*r.cache, int64_t{r.slots.back()} + 1);
    first.push_back(T);
    T += n;
  }
  if (batch.empty()) return;
  const auto S = static_cast<int64_t>(batch.size());
  const Eagle3Config& c = config_;
  const int64_t H = c.hidden_size, q_width = int64_t{c.num_heads} * c.head_dim,
                kv_width = int64_t{c.num_kv_heads} * c.head_dim;
  const auto eps = static_cast<float>(c.rms_norm_eps);
  const KernelOps& ops = backend_->ops();
  Workspace& ws = backend_->workspace();
  ws.begin_step();
  // The sequences' inputs, each copied straight to its place in the pass.
  int32_t* token_ids = ws.take<int32_t>(T);
  int32_t* positions = ws.take<int32_t>(T);
  float* in = ws.take<float>(T * width);
  for (int64_t s = 0; s < S; ++s) {
    const Rows& r = batch[static_cast<size_t>(s)];
    const int64_t at = first[static_cast<size_t>(s)];
    backend_->copy_to_backend(token_ids + at, r.tokens.data(), r.tokens.size_bytes());
    backend_->copy_to_backend(positions + at, r.slots.data(), r.slots.size_bytes());
    backend_->copy_to_backend(in + at * width, r.hidden.data(), r.hidden.size_bytes());
  }
  // The fused hidden state: fc over the three taps, or the chained draft's own output.
  float* x = ws.take<float>(T * H);
  if (width == tap_width())
    ops.linear(fc_, in, T, x, pool_);
  else
    ops.copy(x, in, T * H);
  // q, k and v read [input_layernorm(embedding), hidden_norm(x)], 2H wide.
  float* both = ws.take<float>(T * 2 * H);
  float* embedded = ws.take<float>(T * H);
  ops.embedding(embedding_, token_ids, T, embedded);
  ops.rms_norm(embedded, T, H, input_norm_.data(), eps, false, embedded, pool_);
  float* normed = ws.take<float>(T * H);
  ops.rms_norm(x, T, H, hidden_norm_.data(), eps, false, normed, pool_);
  for (int64_t t = 0; t < T; ++t) {
    ops.copy(both + t * 2 * H, embedded + t * H, H);
    ops.copy(both + t * 2 * H + H, normed + t * H, H);
  }
  float* residual = c.norm_before_residual ? normed : x;
  float* q = ws.take<float>(T * q_width);
  float* k = ws.take<float>(T * kv_width);
  float* v = ws.take<float>(T * kv_width);
  ops.linear(q_, both, T, q, pool_);
  ops.linear(k_, both, T, k, pool_);
  ops.linear(v_, both, T, v, pool_);
  const RopeParams q_rope{c.num_heads, c.head_dim, c.head_dim, c.rope_theta};
  const RopeParams k_rope{c.num_kv_heads, c.head_dim, c.head_dim, c.rope_theta};
  ops.rope(q, T, positions, q_rope, pool_);
  ops.rope(k, T, positions, k_rope, pool_);
  float* attended = ws.take<float>(T * q_width);
  for (int64_t s = 0; s < S; ++s) {
    const int64_t at = first[static_cast<size_t>(s)];
    const auto n = static_cast<int64_t>(batch[static_cast<size_t>(s)].tokens.size());
    Eagle3Cache& cache = *batch[static_cast<size_t>(s)].cache;
    ops.store_kv({.rows = k + at * kv_width,
                  .T = n,
                  .width = kv_width,
                  .positions = positions + at,
                  .storage = cache.k_.data()});
    ops.store_kv({.rows = v + at * kv_width,
                  .T = n,
                  .width = kv_width,
                  .positions = positions + at,
                  .storage = cache.v_.data()});
    AttentionArgs attention;
    attention.q = q + at * q_width;
    attention.T = n;
    attention.num_heads = c.num_heads;
    attention.num_kv_heads = c.num_kv_heads;
    attention.head_dim = c.head_dim;
    attention.k_cache = cache.k_.data();
    attention.v_cache = cache.v_.data();
    attention.cache_stride = kv_width;
    attention.positions = positions + at;
    attention.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    attention.out = attended + at * q_width;
    ops.attention(attention, pool_);
  }
  float* delta = ws.take<float>(T * H);
  ops.linear(o_, attended, T, delta, pool_);
  ops.add(residual, delta, T * H, pool_);
  // The MLP: SiLU-GLU over post_attention_layernorm(residual).
  const int64_t I = c.intermediate_size;
  float* gate = ws.take<float>(T * I);
  float* up = ws.take<float>(T * I);
  float* mlp_in = ws.take<float>(T * H);  // not `normed`: that may be the residual itself
  ops.rms_norm(residual, T, H, post_norm_.data(), eps, false, mlp_in, pool_);
  ops.linear(gate_, mlp_in, T, gate, pool_);
  ops.linear(up_, mlp_in, T, up, pool_);
  ops.glu(gate, up, T * I, GluParams{}, gate);
  ops.linear(down_, gate, T, delta, pool_);
  ops.add(residual, delta, T * H, pool_);
  // Each sequence's last row: its pre-norm state feeds a chained draft; norm and lm_head (one
  // pass over the S rows) give its token.
  float* last = ws.take<float>(S * H);
  for (int64_t s = 0; s < S; ++s) {
    Rows& r = batch[static_cast<size_t>(s)];
    const float* row =
        residual + (first[static_cast<size_t>(s)] + static_cast<int64_t>(r.tokens.size()) - 1) * H;
    ops.copy(last + s * H, row, H);
    r.next_hidden->resize(static_cast<size_t>(H));
    backend_->copy_to_host(r.next_hidden->data(), row, static_cast<size_t>(H) * sizeof(float));
  }
  float* final_rows = ws.take<float>(S * H);
  ops.rms_norm(last, S, H, final_norm_.data(), eps, false, final_rows, pool_);
  const int64_t Vd = c.draft_vocab_size;
  float* out = ws.take<float>(S * Vd);
  ops.linear(lm_head_, final_rows, S, out, pool_);
  std::vector<float> logits(static_cast<size_t>(S * Vd));
  backend_->copy_to_host(logits.data(), out, logits.size() * sizeof(float));
  for (int64_t s = 0; s < S; ++s) {
    const auto row = logits.begin() + s * Vd;
    const auto best =
        static_cast<int64_t>(std::max_element(row, row + Vd) - row);  // ties to the lower id
    batch[static_cast<size_t>(s)].draft =
        static_cast<int32_t>(best + d2t_[static_cast<size_t>(best)]);
  }
}

}  // namespace minimax
