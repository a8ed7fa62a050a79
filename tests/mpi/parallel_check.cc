// Run under mpirun: every checkpoint given is loaded split over the ranks in the mode the flags
// ask for, and rank 0 compares it with the same checkpoint in one process (loaded on rank 0
// alone). On a batch of two prompts (one long enough for M3's block-sparse selection to matter),
// then a batch of greedy decode steps: at every position max |Δlogit| ≤ 1e-5 · max |logit| and the
// greedy tokens are identical. Exit status 0 only if every checkpoint passes; one line per
// checkpoint says what was measured.
//
//   mpirun -n 2 parallel_check --tensor-parallel-size 2 [--enable-expert-parallel] DIR...
//   mpirun -n 2 parallel_check --data-parallel-size 2 --enable-expert-parallel DIR...
//   ... [--kv-cache-dtype bf16|fp8_e4m3]: both runs with that KV cache type (kRoundedKvTolerance)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/linear.h"
#include "model/model.h"
#include "parallel/mpi_world.h"

namespace minimax {
namespace {

constexpr double kTolerance = 1e-5;
// With a bf16 or fp8 KV cache, a key or value that differs in its last f32 bit between the split
// and the single run (sums in another order) can round to the neighbouring code, a step of 2^-8
// (bf16) or 2^-4 (fp8) of the element: the check then shows the pools are mirrored with their
// type (a mismatch gives unrelated logits), not bit-equality.
constexpr double kRoundedKvTolerance = 2e-2;

struct Result {
  double worst_ratio = 0;  // max over positions of max|Δ| / max|logit|
  int positions = 0, argmax_mismatches = 0;
};

// Compares logits rows [rows, vocab] position by position.
void compare(const std::vector<float>& want, const std::vector<float>& got, int64_t vocab,
             Result& r) {
  if (want.size() != got.size())
    fail("logits sizes differ: {} in one process, {} split", want.size(), got.size());
  for (size_t row = 0; row < want.size() / vocab; ++row) {
    const float* a = want.data() + row * vocab;
    const float* b = got.data() + row * vocab;
    double max_abs = 0, max_diff = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      max_abs = std::max(max_abs, std::fabs(double(a[i])));
      max_diff = std::max(max_diff, std::fabs(double(a[i]) - b[i]));
    }
    r.worst_ratio = std::max(r.worst_ratio, max_diff / std::max(max_abs, 1e-30));
    r.argmax_mismatches += std::max_element(a, a + vocab) - a != std::max_element(b, b + vocab) - b;
    ++r.positions;
  }
}

std::vector<int32_t> prompt(int64_t n, int32_t vocab, int32_t seed) {
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((seed * 7919 + i * 104729) % vocab);
  return ids;
}

// Two prompts prefilled together, then `steps` greedy steps of both in one batch. Returns every
// logits row in order (rank 0; empty on the others).
std::vector<float> run(Model& model, int steps, KvDtype kv_dtype,
                       std::vector<std::vector<int32_t>>& tokens_out) {
  const int32_t vocab = model.config().vocab_size;
  std::vector<std::vector<int32_t>> seqs = {prompt(83, vocab, 1), prompt(29, vocab, 2)};
  std::vector<KvCache> caches;
  for (size_t i = 0; i < seqs.size(); ++i) caches.push_back(model.new_cache(128, kv_dtype));
  std::vector<float> all;
  std::vector<std::vector<int32_t>> positions(seqs.size());
  std::vector<BatchSequence> batch(seqs.size());
  for (size_t i = 0; i < seqs.size(); ++i) {
    for (size_t p = 0; p < seqs[i].size(); ++p) positions[i].push_back(static_cast<int32_t>(p));
    batch[i] = {seqs[i], positions[i], &caches[i], LogitsFor::kAllTokens};
  }
  std::vector<float> logits = model.forward_batch(batch);
  all.insert(all.end(), logits.begin(), logits.end());
  tokens_out.assign(seqs.size(), {});
  for (int s = 0; s < steps; ++s) {
    // The last row of each sequence picks its next token (greedy).
    std::vector<int32_t> next(seqs.size()), pos(seqs.size());
    size_t row = 0;
    for (size_t i = 0; i < seqs.size(); ++i) {
      row += s == 0 ? seqs[i].size() : 1;
      const float* last = logits.data() + (row - 1) * vocab;
      next[i] = static_cast<int32_t>(std::max_element(last, last + vocab) - last);
      pos[i] = static_cast<int32_t>(seqs[i].size() + s);
      tokens_out[i].push_back(next[i]);
    }
    for (size_t i = 0; i < seqs.size(); ++i)
      batch[i] = {std::span(&next[i], 1), std::span(&pos[i], 1), &caches[i], LogitsFor::kLastToken};
    logits = model.forward_batch(batch);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

int check(int argc, char** argv) {
  // 1e-5 holds for f32 activations (ModelOptions::cpu's default); a bf16 one of the split and the
  // single run can round apart.
  ParallelRequest request;
  KvDtype kv_dtype = KvDtype::kF32;  // the other ranks mirror each pool with its element type
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tensor-parallel-size" && i + 1 < argc) {
      request.tensor_parallel = std::stoi(argv[++i]);
    } else if (a == "--data-parallel-size" && i + 1 < argc) {
      request.data_parallel = std::stoi(argv[++i]);
    } else if (a == "--kv-cache-dtype" && i + 1 < argc) {
      const std::string t = argv[++i];
      kv_dtype = t == "bf16" ? KvDtype::kBF16 : t == "fp8_e4m3" ? KvDtype::kFp8E4m3 : KvDtype::kF32;
    } else if (a == "--enable-expert-parallel") {
      request.expert_parallel = true;
    } else {
      dirs.push_back(a);
    }
  }
  const Communicator* comm = world_communicator();
  if (comm == nullptr) fail("parallel_check: run it under mpirun with several ranks");
  int failures = 0;
  for (const std::string& dir : dirs) {
    ModelOptions options;
    options.threads = 1;
    options.parallel = request;
    auto split = Model::load(dir, options, comm);
    if (split->is_follower()) {
      split->follow();
      continue;
    }
    ModelOptions single_options;
    single_options.threads = 1;
    auto single = Model::load(dir, single_options);
    std::vector<std::vector<int32_t>> want_tokens, got_tokens;
    const std::vector<float> want = run(*single, 6, kv_dtype, want_tokens);
    const std::vector<float> got = run(*split, 6, kv_dtype, got_tokens);
    Result r;
    compare(want, got, split->config().vocab_size, r);
    const double tolerance = kv_dtype == KvDtype::kF32 ? kTolerance : kRoundedKvTolerance;
    const bool ok =
        r.worst_ratio <= tolerance && (want_tokens == got_tokens || kv_dtype != KvDtype::kF32);
    failures += !ok;
    std::printf(
        "%s %s %s: %d positions, max|Δ|/max|logit| = %.2e (limit %.0e), greedy tokens %s, "
        "argmax differs at %d, weight bytes by rank:",
        ok ? "PASS" : "FAIL", std::string(parallel_mode_name(split->plan().mode)).c_str(),
        dir.c_str(), r.positions, r.worst_ratio, tolerance,
        want_tokens == got_tokens ? "identical" : "DIFFER", r.argmax_mismatches);
    for (uint64_t b : split->mapped_bytes_by_rank()) std::printf(" %llu", (unsigned long long)b);
    std::printf("\n");
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace minimax

int main(int argc, char** argv) {
  minimax::MpiSession mpi(&argc, &argv);
  int status = 1;
  try {
    status = minimax::check(argc, argv);
  } catch (const std::exception& e) {
    if (const minimax::Communicator* world = minimax::world_communicator()) world->abort(e.what());
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  // Every rank returns the same status: rank 0's.
  if (const minimax::Communicator* world = minimax::world_communicator())
    world->broadcast(&status, sizeof status, 0);
  return status;
}
