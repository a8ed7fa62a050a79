// Model loading and the forward pass: embedding, the layer loop (pre-norm residual sublayers), the
// final norm and lm_head.
#include "model/model.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "base/huge_pages.h"
#include "base/log.h"
#include "base/progress.h"
#include "model/rank_link.h"
#include "model/sublayers.h"

namespace minimax {

std::string_view moe_path_name(MoePath path) {
  switch (path) {
    case MoePath::kFast:
      return "fast";
    case MoePath::kDequant:
      return "dequant";
  }
  return "unknown";
}

MoePath parse_moe_path(std::string_view text, std::string_view what) {
  if (text == "fast") return MoePath::kFast;
  if (text == "dequant") return MoePath::kDequant;
  fail("{}: unknown MoE path '{}' (expected fast or dequant)", what, text);
}

std::unique_ptr<Model> Model::load(const std::string& dir, const ModelOptions& options,
                                   const Communicator* comm) {
  // Parsing the config already refused an architecture without a record
  // (checkpoint/arch/architecture.h); M2 and M3 run the same Model.
  ModelConfig config = load_model_config(dir);
  QuantConfig quant = load_quant_config(dir);
  auto store = std::make_unique<TensorStore>(dir);
  return std::make_unique<Model>(std::move(config), std::move(quant), std::move(store), options,
                                 comm);
}

Model::Model(ModelConfig config, QuantConfig quant, std::unique_ptr<TensorStore> store,
             const ModelOptions& options, const Communicator* comm)
    : config_(std::move(config)),
      quant_(std::move(quant)),
      store_(std::move(store)),
      options_(options),
      comm_(comm != nullptr && comm->size() > 1 ? comm : nullptr),
      backend_(options.make_backend ? options.make_backend()
               : options.kernels != nullptr
                   ? create_host_backend(*options.kernels)
                   : create_backend(options.backend, {options.cpu, options.cpu_moe})),
      link_(std::make_shared<Link>()) {
  // The layout and the ranks' sameness are settled before any weight is read.
  plan_ = make_parallel_plan(options_.parallel, comm_ ? comm_->size() : 1,
                             comm_ ? comm_->rank() : 0, config_);
  local_config_ = local_model_config(config_, plan_);
  link_->comm = comm_;
  if (comm_ != nullptr) {
    if (!backend_->host_memory())
      fail(
          "model: the '{}' backend keeps activations off the host, and the MPI transport between "
          "ranks works on host memory (use the cpu backend)",
          backend_->name());
    // No deadline while the ranks load at their own pace (a model loaded after another one, as
    // parallel_check does, finds it armed); armed again below once all have loaded.
    comm_->set_wait_timeout(0);
    check_same_model_on_every_rank(*comm_, *store_, options_.parallel);
  }
  pool_ = options_.pool;
  if (pool_ == nullptr) {
    own_pool_ = std::make_unique<ThreadPool>(options_.threads);
    pool_ = own_pool_.get();
  }
  act_quant_ = plan_activation_quant(config_, quant_, options_.emulate_activation_quant);
  LoadOptions load;
  load.dequant_experts = options_.moe_path == MoePath::kDequant;
  load.plan = plan_;
  weights_ = load_model_weights(*store_, config_, quant_, load);
  if (should_prefault(kept_bytes(weights_), options_.memory_available_bytes)) {
    const bool progress = options_.show_load_progress && !is_follower();
    if (options_.huge_page_weights && backend_->host_memory() && transparent_huge_pages_available())
      huge_page_weight_bytes_ = move_weights_to_huge_pages(weights_, *store_, progress);
    prefault_weights(weights_, progress);  // what was not moved
  } else
    log_info(
        "{}: the weights ({}) are more than the memory available ({}): not read in at load; "
        "their pages stream in from the checkpoint as the forward pass reads them (slower)",
        store_->dir(), format_bytes(double(kept_bytes(weights_))),
        format_bytes(double(options_.memory_available_bytes)));
  options_.pool = pool_;
  mapped_by_rank_.assign(comm_ ? comm_->size() : 1, 0);
  if (comm_ != nullptr) {
    comm_->allgather(&weights_.mapped_bytes, sizeof(uint64_t), mapped_by_rank_.data());
    // Every rank has loaded (the allgather above met them all): from here on, a rank that waits
    // longer than the timeout for the others ends the job. Rank 0 keeps the followers' waits for
    // its next message short with heartbeats, 4 per timeout.
    const double timeout = options_.parallel.collective_timeout_seconds;
    comm_->set_wait_timeout(timeout);
    if (timeout > 0 && !is_follower())
      link_->start_heartbeat(std::chrono::nanoseconds(static_cast<int64_t>(timeout * 0.25e9)));
  } else
    mapped_by_rank_[0] = weights_.mapped_bytes;
  if (!is_follower())
    log_info("{}: {} {} model, {} layers, kernels '{}', MoE path {}{}", store_->dir(),
             config_.architecture, quant_scheme_name(quant_.scheme), config_.num_layers,
             backend_->name(), moe_path_name(options_.moe_path),
             comm_
                 ? fmt::format(", {} over {} ranks", parallel_mode_name(plan_.mode), comm_->size())
                 : std::string());
}

Model::~Model() {
  // Rank 0 ends the other ranks' follow(); pools that outlive the model no longer send anything.
  link_->heartbeat = std::jthread();  // joined before the lock it takes
  std::lock_guard<std::mutex> lock(link_->mutex);
  if (comm_ != nullptr && !is_follower() && link_->open) {
    RankHeader stop;
    stop.command = static_cast<uint32_t>(RankCommand::kStop);
    link_->send(stop);
  }
  link_->open = false;
}

KvCache Model::new_cache(int64_t capacity, KvDtype dtype) const {
  if (capacity <= 0) fail("KV cache: capacity must be positive, got {}", capacity);
  return KvCache(make_pool(1, capacity, dtype));
}

std::unique_ptr<KvBlockPool> Model::new_kv_pool(int64_t num_blocks, int64_t block_size,
                                                KvDtype dtype) const {
  return make_pool(num_blocks, block_size, dtype);
}

std::vector<float> Model::forward(std::span<const int32_t> tokens,
                                  std::span<const int32_t> positions, KvCache& cache,
                                  LogitsFor which) {
  const BatchSequence one{tokens, positions, &cache, which};
  return run_batch(std::span(&one, 1), /*single=*/true);
}

std::vector<float> Model::forward_batch(std::span<const BatchSequence> batch) {
  return run_batch(batch, /*single=*/false);
}

void Model::check_batch(std::span<const BatchSequence> batch, bool single) const {
  if (batch.empty()) fail("forward_batch: empty batch");
  // Errors name the sequence: "forward: ..." alone, "forward_batch: sequence i: ..." in a batch.
  auto where = [&](size_t i) {
    return single ? std::string("forward") : fmt::format("forward_batch: sequence {}", i);
  };
  const int64_t vocab = weights_.embedding.rows;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchSequence& s = batch[i];
    if (s.tokens.empty()) fail("{}: no tokens", where(i));
    if (s.positions.size() != s.tokens.size())
      fail("{}: {} tokens but {} positions", where(i), s.tokens.size(), s.positions.size());
    if (s.cache == nullptr) fail("{}: no KV cache", where(i));
    for (size_t j = 0; j < i; ++j)
      if (batch[j].cache == s.cache) fail("{}: same KV cache as sequence {}", where(i), j);
    for (int32_t token : s.tokens)
      if (token < 0 || token >= vocab)
        fail("{}: token id {} is outside the vocabulary of {}", where(i), token, vocab);
    for (int32_t p : s.positions) {
      try {
        s.cache->check_position(p);
      } catch (const Error& e) {
        fail("{}: {}", where(i), e.what());
      }
    }
    const int64_t length =
        s.cache->length_after(s.positions.data(), static_cast<int64_t>(s.positions.size()));
    for (size_t t = 0; t < s.positions.size(); ++t)
      if (s.positions[t] >= length)
        fail("{}: token {} at position {} would attend slot {}, which holds no token", where(i), t,
             s.positions[t], length);
  }
}

std::vector<float> Model::run_batch(std::span<const BatchSequence> batch, bool single) {
  check_batch(batch, single);
  // Every check passed: only now does any cache change.
  std::lock_guard<std::mutex> lock(link_->mutex);
  for (const BatchSequence& s : batch)
    s.cache->mark_filled(s.positions.data(), static_cast<int64_t>(s.positions.size()));
  if (comm_ == nullptr) return run_layers(batch);
  // Under DP_EP a sequence's KV lives on one rank: the one its pool and first block name.
  // Sequences sharing a prefix share their first block, so they meet on the same rank.
  std::vector<int32_t> dp_rank(batch.size(), 0);
  if (plan_.data_parallel())
    for (size_t i = 0; i < batch.size(); ++i)
      dp_rank[i] = static_cast<int32_t>(
          (batch[i].cache->pool().link_id() + batch[i].cache->block_table().at(0)) % plan_.ranks);
  send_step(batch, dp_rank);
  try {
    return run_step(batch, dp_rank);
  } catch (const std::exception& e) {
    comm_->abort(e.what());  // the other ranks are mid-step: nobody can continue
    throw;  // not reached (abort ends the process); GCC does not credit a [[noreturn]] virtual
  }
}

// One step's rows on the backend. Sequence i's rows start at offsets[i] of the host copy.
struct Model::StepRows {
  const int32_t* tokens;
  const int32_t* positions;
  const int32_t* logit_rows;  // the rows whose logits are wanted, in batch order
  int64_t total;              // rows in the step
  int64_t logit_count;
  std::span<const int64_t> offsets;  // n + 1 entries
};

Model::StepRows Model::stage_rows(std::span<const BatchSequence> batch) {
  const size_t n = batch.size();
  int64_t total = 0;
  for (const BatchSequence& s : batch) total += static_cast<int64_t>(s.tokens.size());
  step_tokens_.resize(total);
  step_positions_.resize(total);
  step_offsets_.assign(n + 1, 0);
  step_logit_rows_.clear();
  for (size_t i = 0; i < n; ++i) {
    const int64_t T = static_cast<int64_t>(batch[i].tokens.size()), begin = step_offsets_[i];
    std::copy(batch[i].tokens.begin(), batch[i].tokens.end(), step_tokens_.begin() + begin);
    std::copy(batch[i].positions.begin(), batch[i].positions.end(),
              step_positions_.begin() + begin);
    step_offsets_[i + 1] = begin + T;
    const int64_t first = batch[i].which == LogitsFor::kLastToken ? begin + T - 1 : begin;
    for (int64_t r = first; r < begin + T; ++r) step_logit_rows_.push_back(static_cast<int32_t>(r));
  }
  Backend& backend = *backend_;
  return StepRows{.tokens = backend.upload<int32_t>(step_tokens_),
                  .positions = backend.upload<int32_t>(step_positions_),
                  .logit_rows = backend.upload<int32_t>(step_logit_rows_),
                  .total = total,
                  .logit_count = static_cast<int64_t>(step_logit_rows_.size()),
                  .offsets = step_offsets_};
}

ForwardContext Model::context_for(const int32_t* positions, int64_t T,
                                  const int32_t* page_table) const {
  return ForwardContext{.config = local_config_,
                        .ops = backend_->ops(),
                        .ws = backend_->workspace(),
                        .pool = pool_,
                        .act_quant = act_quant_,
                        .dense_attention = options_.dense_attention,
                        .bf16_experts = options_.moe_path == MoePath::kDequant,
                        .positions = positions,
                        .T = T,
                        .page_table = page_table,
                        .plan = plan_,
                        .comm = comm_,
                        .full_config = config_};
}

std::vector<float> Model::run_layers(std::span<const BatchSequence> batch) {
  backend_->workspace().begin_step();
  const StepRows rows = stage_rows(batch);
  if (rows.total == 0) {
    // A DP_EP rank without sequences this step still serves its experts to the others.
    const ForwardContext all = context_for(rows.positions, 0, nullptr);
    for (int l = 0; l < config_.num_layers; ++l)
      if (weights_.layers[l].moe) idle_moe_layer(all, weights_.layers[l]);
    return {};
  }
  float* h = backend_->workspace().take<float>(rows.total * config_.hidden_size);
  backend_->ops().embedding(weights_.embedding, rows.tokens, rows.total, h);
  run_decoder_layers(batch, rows, h);
  return logits_of(h, rows);
}

void Model::set_hidden_taps(std::vector<int> layers) {
  for (int layer : layers)
    if (layer < 0 || layer >= config_.num_layers)
      fail("hidden taps: layer {} is outside the model's {} layers", layer, config_.num_layers);
  if (!layers.empty() && !backend_->host_memory())
    fail("hidden taps: the '{}' backend keeps activations off the host", backend_->name());
  // Under DP_EP every rank taps its own sequences and sends the rows to rank 0 with its logits.
  if (plan_.data_parallel() && !is_follower()) {
    std::lock_guard<std::mutex> lock(link_->mutex);
    RankHeader h;
    h.command = static_cast<uint32_t>(RankCommand::kSetTaps);
    h.args[0] = static_cast<int64_t>(layers.size());
    static_assert(sizeof(int) == sizeof(int32_t));
    h.payload_bytes = layers.size() * sizeof(int);
    link_->send(h, layers.data());
  }
  tap_layers_ = std::move(layers);
  taps_.clear();
}

void Model::run_decoder_layers(std::span<const BatchSequence> batch, const StepRows& rows,
                               float* h) {
  const int64_t H = config_.hidden_size, total = rows.total;
  const float eps = static_cast<float>(config_.rms_norm_eps);
  const bool gemma = config_.use_gemma_norm;
  const KernelOps& ops = backend_->ops();
  Workspace& ws = backend_->workspace();
  const ForwardContext all = context_for(rows.positions, total, nullptr);
  std::vector<ForwardContext> per_sequence;
  per_sequence.reserve(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    const int32_t* table = backend_->upload<int32_t>(std::span(batch[i].cache->block_table()));
    per_sequence.push_back(context_for(rows.positions + rows.offsets[i],
                                       rows.offsets[i + 1] - rows.offsets[i], table));
  }
  // Under tensor parallelism the attention and FFN outputs are this rank's partial sums.
  auto sum_over_ranks = [&](float* x) {
    if (plan_.tensor_parallel()) comm_->allreduce_sum(x, static_cast<size_t>(total * H));
  };
  float* xn = ws.take<float>(total * H);
  float* delta = ws.take<float>(total * H);
  const auto taps = static_cast<int64_t>(tap_layers_.size());
  if (taps > 0) taps_.resize(static_cast<size_t>(total * taps * H));
  for (int l = 0; l < config_.num_layers; ++l) {
    for (int64_t k = 0; k < taps; ++k) {
      if (tap_layers_[k] != l) continue;
      // Row t of layer k's tap lands at taps_[t, k·H .. (k+1)·H).
      tap_staging_.resize(static_cast<size_t>(total * H));
      backend_->copy_to_host(tap_staging_.data(), h, tap_staging_.size() * sizeof(float));
      for (int64_t t = 0; t < total; ++t)
        std::copy_n(tap_staging_.begin() + t * H, H, taps_.begin() + (t * taps + k) * H);
    }
    const LayerWeights& w = weights_.layers[l];
    ops.rms_norm(h, total, H, w.input_norm.data(), eps, gemma, xn, pool_);
    // Attention is the one per-sequence step: each reads and writes its own cache.
    for (size_t i = 0; i < batch.size(); ++i)
      attention_sublayer(per_sequence[i], w, l, xn + rows.offsets[i] * H, *batch[i].cache,
                         delta + rows.offsets[i] * H);
    sum_over_ranks(delta);
    ops.add(h, delta, total * H, pool_);
    ops.rms_norm(h, total, H, w.post_norm.data(), eps, gemma, xn, pool_);
    ffn_sublayer(all, w, xn, delta);
    sum_over_ranks(delta);
    ops.add(h, delta, total * H, pool_);
  }
}

std::vector<float> Model::logits_of(const float* h, const StepRows& rows) {
  const int64_t H = config_.hidden_size, out_rows = rows.logit_count;
  Backend& backend = *backend_;
  const KernelOps& ops = backend.ops();
  Workspace& ws = backend.workspace();
  // The rows that want logits through the final norm and lm_head together.
  float* chosen = ws.take<float>(out_rows * H);
  ops.gather_rows(h, H, rows.logit_rows, out_rows, chosen);
  ops.rms_norm(chosen, out_rows, H, weights_.final_norm.data(),
               static_cast<float>(config_.rms_norm_eps), config_.use_gemma_norm, chosen, pool_);
  std::vector<float> logits(out_rows * weights_.lm_head.rows);
  // A host backend writes the result in place; another one writes its memory, then it is copied.
  float* out = backend.host_memory() ? logits.data() : ws.take<float>(std::ssize(logits));
  ops.linear(weights_.lm_head, chosen, out_rows, out, pool_);
  if (out != logits.data()) backend.copy_to_host(logits.data(), out, logits.size() * sizeof(float));
  return logits;
}

}  // namespace minimax
