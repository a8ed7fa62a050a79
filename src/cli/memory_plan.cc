#include "cli/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/error.h"
#include "base/progress.h"
#include "cli/kv_memory.h"
#include "runtime/memory_footprint.h"

namespace minimax::cli {
namespace {

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }
std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / double(1 << 30)); }

// The largest share any rank holds: the ranks of one layout differ by at most a replicated
// lm_head, and the host must fit the largest.
struct RankShare {
  WeightFootprint weights;
  int64_t kv_per_token = 0;
  int ranks = 1;
  ParallelMode mode = ParallelMode::kSingle;
};

RankShare largest_rank_share(const ModelConfig& config, const QuantConfig& quant,
                             const ParallelRequest& request, KvDtype dtype) {
  RankShare share;
  share.ranks = request.tensor_parallel * request.data_parallel;
  for (int rank = 0; rank < share.ranks; ++rank) {
    const ParallelPlan plan = make_parallel_plan(request, share.ranks, rank, config);
    const WeightFootprint w = weight_footprint(config, quant, plan);
    share.weights.held = std::max(share.weights.held, w.held);
    share.weights.per_token = std::max(share.weights.per_token, w.per_token);
    share.kv_per_token = std::max(share.kv_per_token, kv_bytes_per_token(config, plan, dtype));
    share.mode = plan.mode;
  }
  return share;
}

}  // namespace

MemoryPlan plan_memory(const MemoryPlanInputs& in) {
  const ModelConfig& config = in.config;
  const RankShare rank = largest_rank_share(config, in.quant, in.parallel, in.kv_dtype);
  const int64_t whole_kv =
      kv_bytes_per_token(config, make_parallel_plan({}, 1, 0, config), in.kv_dtype);
  const int64_t context = in.context > 0 ? in.context : config.max_position_embeddings;
  MemoryPlan plan;
  std::string& out = plan.text;
  out += fmt::format(
      "memory plan  {} {}, {}{}, KV {}\n", config.architecture, quant_scheme_name(in.quant.scheme),
      parallel_mode_name(rank.mode),
      rank.ranks > 1 ? fmt::format(" over {} ranks ({} on this host)", rank.ranks, in.ranks_on_host)
                     : "",
      kv_dtype_name(in.kv_dtype));
  out += fmt::format("  weights        {} per rank{}\n", gb(double(rank.weights.held)),
                     rank.ranks > 1 ? fmt::format(" (the largest share of {})", rank.ranks) : "");
  out += fmt::format("  KV per token   {} bytes per rank ({} for the whole model)\n",
                     rank.kv_per_token, whole_kv);
  out += fmt::format("  this host      {} (MemTotal or the cgroup limit), {} available now\n",
                     gib(double(in.host_bytes)), gib(double(in.available_bytes)));
  if (in.draft_bytes > 0)
    out += fmt::format(
        "  draft head     {} (the EAGLE-3 head's weights and the server's tap store), beside the "
        "KV pool\n",
        gib(double(in.draft_bytes)));
  // The pool as serve sizes it: auto takes its share of what the weights leave, per rank; a size
  // counts the whole model's KV, of which each rank holds its heads' part.
  int64_t tokens = 0;
  const int64_t weights_on_host = int64_t(rank.weights.held) * in.ranks_on_host;
  if (in.kv_cache_memory == "auto") {
    KvMemoryInputs kv;
    kv.host_bytes = in.host_bytes;
    kv.weights_bytes = weights_on_host;
    kv.reserve_bytes = kKvReserveBytes + in.draft_bytes;
    kv.utilization = in.utilization;
    kv.ranks_on_host = in.ranks_on_host;
    kv.bytes_per_token = rank.kv_per_token;
    kv.tokens_wanted = in.max_num_seqs * std::max<int64_t>(context, 1);
    try {
      tokens = plan_kv_memory(kv).bytes / rank.kv_per_token;
    } catch (const Error& e) {
      out += fmt::format("  KV pool        none: {}\n", e.what());
      plan.fits = false;
    }
    if (plan.fits)
      out += fmt::format(
          "  KV pool        {} per rank: {} × (memory − weights − {} reserve{}){}, at most what {} "
          "requests of {} tokens fill\n",
          gib(double(tokens * rank.kv_per_token)), in.utilization, gib(double(kKvReserveBytes)),
          in.draft_bytes > 0 ? fmt::format(" − {} draft head", gib(double(in.draft_bytes))) : "",
          in.ranks_on_host > 1 ? fmt::format(" / {} ranks", in.ranks_on_host) : "", in.max_num_seqs,
          context);
  } else {
    tokens = in.kv_cache_bytes / whole_kv;
    const int64_t needed = weights_on_host + tokens * rank.kv_per_token * in.ranks_on_host +
                           kKvReserveBytes + in.draft_bytes;
    out += fmt::format(
        "  KV pool        {} per rank (--kv-cache-memory {} counts the whole model's KV); this "
        "host needs {} with the weights and the reserve\n",
        gib(double(tokens * rank.kv_per_token)), in.kv_cache_memory, gib(double(needed)));
    if (in.host_bytes > 0 && needed > in.host_bytes) {
      out += fmt::format("  does not fit: {} needed, {} on this host\n", gib(double(needed)),
                         gib(double(in.host_bytes)));
      plan.fits = false;
    }
  }
  if (plan.fits) {
    out += fmt::format("  tokens         {} in the KV pool: {} request(s) at the context of {}\n",
                       tokens, tokens / std::max<int64_t>(context, 1), context);
    if (tokens < context) {
      out += fmt::format("  short context  the pool holds less than one request of {} tokens\n",
                         context);
      plan.fits = false;
    }
  }
  // Every rank on this host streams its own per-token bytes through the same memory.
  const double per_token_on_host = double(rank.weights.per_token) * in.ranks_on_host;
  out += fmt::format("  decode reads   {} of weights per token per rank\n",
                     gb(double(rank.weights.per_token)));
  if (in.read_gbps > 0)
    out += fmt::format(
        "  decode bound   {:.1f} tokens/s: {:.1f} GB/s read ({}) / {} per token on this host\n",
        in.read_gbps * 1e9 / per_token_on_host, in.read_gbps, in.read_gbps_source,
        gb(per_token_on_host));
  return plan;
}

std::string layout_fit_table(const nlohmann::json& hf_config, const std::string& source,
                             int64_t context) {
  constexpr int kHostsGiB[] = {128, 192, 256, 384, 512};
  const ModelConfig config = parse_model_config(hf_config, source);
  const ParallelPlan single = make_parallel_plan({}, 1, 0, config);
  std::string out =
      fmt::format("| layout | weights | KV/token f32 | bf16 | fp8 | decode reads/token |");
  for (const int host : kHostsGiB) out += fmt::format(" {} GiB |", host);
  out += "\n|---|---:|---:|---:|---:|---:|";
  for (size_t i = 0; i < std::size(kHostsGiB); ++i) out += "---:|";
  out += "\n";
  const int64_t kv_bf16 = kv_bytes_per_token(config, single, KvDtype::kBF16);
  for (const QuantScheme scheme : all_quant_schemes()) {
    const QuantConfig quant = quant_config_for_layout(hf_config, scheme, source);
    const WeightFootprint w = weight_footprint(config, quant, single);
    out += fmt::format("| {} | {} | {} | {} | {} | {} |", quant_scheme_name(scheme),
                       gb(double(w.held)),
                       format_bytes(kv_bytes_per_token(config, single, KvDtype::kF32)),
                       format_bytes(double(kv_bf16)),
                       format_bytes(kv_bytes_per_token(config, single, KvDtype::kFp8E4m3)),
                       gb(double(w.per_token)));
    for (const int host : kHostsGiB) {
      KvMemoryInputs kv;
      kv.host_bytes = int64_t(host) << 30;
      kv.weights_bytes = int64_t(w.held);
      kv.reserve_bytes = kKvReserveBytes;
      kv.bytes_per_token = kv_bf16;
      const int64_t left = kv.host_bytes - kv.weights_bytes - kv.reserve_bytes;
      const int64_t requests = left > 0 ? plan_kv_memory(kv).bytes / kv_bf16 / context : -1;
      out += requests < 0 ? " — |" : fmt::format(" {} |", requests);
    }
    out += "\n";
  }
  return out;
}

}  // namespace minimax::cli
