#include "parallel/parallel_mode.h"

#include "base/error.h"

namespace minimax {

std::string_view parallel_mode_name(ParallelMode mode) {
  switch (mode) {
    case ParallelMode::kSingle:
      return "single";
    case ParallelMode::kTpTp:
      return "TP_TP";
    case ParallelMode::kTpEp:
      return "TP_EP";
    case ParallelMode::kDpEp:
      return "DP_EP";
  }
  return "unknown";
}

ParallelMode select_parallel_mode(const ParallelRequest& r) {
  if (r.tensor_parallel < 1)
    fail("--tensor-parallel-size must be at least 1, got {}", r.tensor_parallel);
  if (r.data_parallel < 1) fail("--data-parallel-size must be at least 1, got {}", r.data_parallel);
  if (r.tensor_parallel > 1 && r.data_parallel > 1)
    fail(
        "--tensor-parallel-size {} with --data-parallel-size {}: tensor parallelism inside data "
        "parallel groups is not supported; use one of them",
        r.tensor_parallel, r.data_parallel);
  if (r.data_parallel > 1) {
    if (!r.expert_parallel)
      fail(
          "--data-parallel-size {} needs --enable-expert-parallel (DP_EP: each rank its own "
          "requests, experts partitioned); replicated data-parallel copies are separate servers",
          r.data_parallel);
    return ParallelMode::kDpEp;
  }
  if (r.tensor_parallel > 1) return r.expert_parallel ? ParallelMode::kTpEp : ParallelMode::kTpTp;
  return ParallelMode::kSingle;
}

Split ParallelPlan::split_of(const SplitRules& rules) const {
  switch (mode) {
    case ParallelMode::kSingle:
      return Split::kReplicated;
    case ParallelMode::kTpTp:
      return rules.tp_tp;
    case ParallelMode::kTpEp:
      return rules.tp_ep;
    case ParallelMode::kDpEp:
      return rules.dp_ep;
  }
  return Split::kReplicated;
}

ParallelPlan make_parallel_plan(const ParallelRequest& request, int world_size, int rank,
                                const ModelConfig& c) {
  ParallelPlan p;
  p.mode = select_parallel_mode(request);
  const int wanted = request.tensor_parallel * request.data_parallel;
  if (wanted != world_size)
    fail(
        "--tensor-parallel-size {} × --data-parallel-size {} = {} ranks, but {} were started "
        "(mpirun -n {})",
        request.tensor_parallel, request.data_parallel, wanted, world_size, wanted);
  p.rank = rank;
  p.ranks = world_size;
  p.heads = c.num_heads;
  p.kv_heads = c.num_kv_heads;
  const int n = world_size;
  if (p.tensor_parallel()) {
    if (c.num_heads % n != 0)
      fail("--tensor-parallel-size {}: the model's {} attention heads do not divide among {} ranks",
           n, c.num_heads, n);
    if (c.num_kv_heads % n != 0 && n % c.num_kv_heads != 0)
      fail(
          "--tensor-parallel-size {}: the model's {} KV heads and {} ranks do not divide one "
          "another",
          n, c.num_kv_heads, n);
    p.heads = c.num_heads / n;
    p.head_begin = rank * p.heads;
    if (n <= c.num_kv_heads) {
      p.kv_heads = c.num_kv_heads / n;
      p.kv_head_begin = rank * p.kv_heads;
    } else {  // each rank's query heads read one KV head, which kv_copies ranks hold
      p.kv_heads = 1;
      p.kv_copies = n / c.num_kv_heads;
      p.kv_head_begin = rank / p.kv_copies;
    }
  }
  if (p.expert_parallel() && c.num_experts > 0) {
    if (c.num_experts % n != 0)
      fail("--enable-expert-parallel: the model's {} experts do not divide among {} ranks",
           c.num_experts, n);
    const int share = c.num_experts / n;
    p.expert_begin = rank * share;
    p.expert_end = p.expert_begin + share;
  }
  auto check_width = [&](int64_t width, std::string_view what) {
    if (width > 0 && width % n != 0)
      fail("--tensor-parallel-size {}: the model's {} {} does not divide among {} ranks", n, what,
           width, n);
  };
  if (p.mode == ParallelMode::kTpTp && c.num_experts > 0)
    check_width(c.intermediate_size, "expert width (intermediate_size)");
  if (p.tensor_parallel()) {
    check_width(c.shared_intermediate_size * (c.n_shared_experts > 0 ? 1 : 0),
                "shared expert width (shared_intermediate_size)");
    check_width(c.dense_intermediate_size, "dense FFN width (dense_intermediate_size)");
  }
  return p;
}

ModelConfig local_model_config(const ModelConfig& config, const ParallelPlan& plan) {
  ModelConfig c = config;
  if (!plan.tensor_parallel()) return c;
  c.num_heads = plan.heads;
  c.num_kv_heads = plan.kv_heads;
  if (plan.mode == ParallelMode::kTpTp) c.intermediate_size /= plan.ranks;
  if (c.n_shared_experts > 0) c.shared_intermediate_size /= plan.ranks;
  c.dense_intermediate_size /= plan.ranks;
  return c;
}

}  // namespace minimax
