// Test fixtures: tiny checkpoints regenerated in C++ exactly as `minimax make-tiny` writes their
// weights (same config, seed and quantizer), and the golden logits of tools/reference/.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "base/error.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "kernels/backend.h"
#include "kernels/ops.h"

namespace minimax::testing_support {

// Logits against the reference's goldens (f32 activations and KV cache).
constexpr double kLogitTolerance = 2e-4;
// Past 2048 tokens, dense attention must move some checked logit of the MSA tests by more than
// this (500× the golden tolerance), so that the block choice is shown to matter and the golden
// comparison alone would catch "no selection at all" (the reference's own sparse-vs-dense gap
// there, recorded in the long-prompt golden, is about 1.2).
constexpr double kSelectionMatters = 0.1;

// A directory holding the tiny checkpoint of (arch, scheme, seed, vocab): built once per test
// process under a scratch root that is removed when the tests end.
std::string tiny_checkpoint(Arch arch, QuantScheme scheme, uint64_t seed, int vocab_size);
// A fresh scratch directory path (not created) for a test's own files.
// The tiny M3 with the released model's MSA geometry: 4 index heads (one per KV group), blocks of
// 128 tokens, top-16, the local block forced and no initial one.
nlohmann::json msa_release_geometry_config_json(int vocab_size);

std::string scratch_path(const std::string& name);

// FNV-1a 64 over every *.safetensors file of `dir` in name order, as tools/reference computes it.
std::string fnv1a64_of_shards(const std::string& dir);

// tests/data/golden/<name>.json.
nlohmann::json load_golden(const std::string& name);
std::vector<std::string> golden_names();

Arch golden_arch(const nlohmann::json& golden);
QuantScheme golden_scheme(const nlohmann::json& golden);
// The checkpoint a golden was computed from, after checking its shard hash.
std::string golden_checkpoint(const nlohmann::json& golden);

// 0, 1, ..., n - 1.
std::vector<int32_t> iota_positions(size_t n);

// The logits of every position [tokens, vocab] of `golden`'s tokens on its checkpoint with
// `backend`, in a KV cache of `dtype` (the cache's type is checked); batch_invariant: the cpu
// backend's row kernels at every call size (CpuKernelConfig::batch_invariant).
std::vector<float> golden_forward(const nlohmann::json& golden, BackendKind backend, KvDtype dtype,
                                  ActivationPrecision activations = ActivationPrecision::kF32,
                                  bool batch_invariant = false);
// max |logits − golden| over the golden's checked top logits and its whole last row.
double golden_distance(const std::vector<float>& logits, const nlohmann::json& golden);
// The token id of the largest logit in the last row of `logits`, and in the golden's.
int64_t last_argmax(const std::vector<float>& logits, const nlohmann::json& golden);
int64_t golden_last_argmax(const nlohmann::json& golden);

// `n` prompt tokens (i · 37 + salt) mod vocab: every id in range, varied, reproducible.
inline std::vector<int32_t> prompt_tokens(size_t n, int vocab, int salt = 11) {
  std::vector<int32_t> tokens(n);
  for (size_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 37 + salt) % vocab);
  return tokens;
}

// from, from + 1, ..., to - 1.
inline std::vector<int32_t> token_range(int32_t from, int32_t to) {
  std::vector<int32_t> v(to - from);
  std::iota(v.begin(), v.end(), from);
  return v;
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs `body` and expects an Error whose message contains `text`.
inline void expect_error_mentions(const std::function<void()>& body, const std::string& text) {
  try {
    body();
    ADD_FAILURE() << "no error; expected one mentioning " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace minimax::testing_support
