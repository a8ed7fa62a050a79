// The whole tiny-model forward pass on the cpu backend (SIMD linear, MoE, attention, block choice,
// norms, RoPE, router) against the reference backend: a prefill of every position and then a
// token-by-token decode through the KV cache, both architectures in several layouts, the M3 long
// prompt where the MSA block choice matters, and the same bits at every thread count.
//
// Tolerance: |cpu − reference| ≤ 2e-4 on every logit (the golden tolerance; logits are O(1)–O(5)
// and the cpu backend computes in f32 against the reference's float64), and the same top-1 token
// at every position.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::iota_positions;

using testing_support::kLogitTolerance;

struct ModelRun {
  std::vector<float> prefill;  // [T, vocab]
  std::vector<float> decode;   // [steps, vocab]: one token at a time after the prefill
};

// Prefill `tokens`, then decode `extra` one at a time.
ModelRun run_model(Model& model, const std::vector<int32_t>& tokens,
                   const std::vector<int32_t>& extra) {
  KvCache cache = model.new_cache(static_cast<int64_t>(tokens.size() + extra.size()));
  ModelRun r;
  r.prefill = model.forward(tokens, iota_positions(tokens.size()), cache, LogitsFor::kAllTokens);
  for (size_t i = 0; i < extra.size(); ++i) {
    const int32_t token = extra[i], position = static_cast<int32_t>(tokens.size() + i);
    const auto logits = model.forward({&token, 1}, {&position, 1}, cache);
    r.decode.insert(r.decode.end(), logits.begin(), logits.end());
  }
  return r;
}

void expect_close(const std::vector<float>& cpu, const std::vector<float>& ref, int64_t vocab,
                  const std::string& what) {
  ASSERT_EQ(cpu.size(), ref.size()) << what;
  double worst = 0;
  for (size_t row = 0; row < cpu.size() / vocab; ++row) {
    const float* c = cpu.data() + row * vocab;
    const float* r = ref.data() + row * vocab;
    for (int64_t i = 0; i < vocab; ++i) worst = std::max(worst, std::fabs(double(c[i]) - r[i]));
    EXPECT_EQ(std::max_element(c, c + vocab) - c, std::max_element(r, r + vocab) - r)
        << what << ": top-1 at row " << row;
  }
  EXPECT_LE(worst, kLogitTolerance) << what;
  std::printf("[ measured ] %s: max |cpu - reference| = %.3g\n", what.c_str(), worst);
}

using testing_support::prompt_tokens;

struct CpuBackendCase {
  Arch arch;
  QuantScheme scheme;
};

class CpuBackendModel : public ::testing::TestWithParam<CpuBackendCase> {};

TEST_P(CpuBackendModel, PrefillAndDecodeMatchTheReferenceBackend) {
  const int vocab = 576;
  const std::string dir =
      testing_support::tiny_checkpoint(GetParam().arch, GetParam().scheme, 3, vocab);
  ModelOptions options;
  options.threads = 2;
  options.backend = BackendKind::kReference;
  auto reference = Model::load(dir, options);
  options.backend = BackendKind::kCpu;
  auto cpu = Model::load(dir, options);
  ASSERT_STREQ(cpu->ops().name, "cpu");
  const auto tokens = prompt_tokens(21, vocab), extra = prompt_tokens(6, vocab);
  const ModelRun r = run_model(*reference, tokens, extra), c = run_model(*cpu, tokens, extra);
  const std::string name = std::string(GetParam().arch == Arch::kM2 ? "m2 " : "m3 ") +
                           std::string(quant_scheme_name(GetParam().scheme));
  expect_close(c.prefill, r.prefill, vocab, name + " prefill");
  expect_close(c.decode, r.decode, vocab, name + " decode");
}

INSTANTIATE_TEST_SUITE_P(Layouts, CpuBackendModel,
                         ::testing::Values(CpuBackendCase{Arch::kM2, QuantScheme::kNone},
                                           CpuBackendCase{Arch::kM2, QuantScheme::kFp8Block},
                                           CpuBackendCase{Arch::kM2, QuantScheme::kNvfp4},
                                           CpuBackendCase{Arch::kM3, QuantScheme::kNone},
                                           CpuBackendCase{Arch::kM3, QuantScheme::kFp8Channel},
                                           CpuBackendCase{Arch::kM3, QuantScheme::kMxfp4}),
                         [](const ::testing::TestParamInfo<CpuBackendCase>& info) {
                           std::string name =
                               std::string(info.param.arch == Arch::kM2 ? "m2_" : "m3_") +
                               std::string(quant_scheme_name(info.param.scheme));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(CpuBackendModelLong, SparseBlockChoiceMatchesTheReferenceBackend) {
  // The M3 long prompt goes well past top-k·block (64) tokens, so the MSA layers choose blocks: a
  // different choice at any position would move its logits by more than 1e-2 (golden_test).
  const nlohmann::json g = testing_support::load_golden("m3-bf16-long");
  const auto tokens = g.at("tokens").get<std::vector<int32_t>>();
  const int64_t vocab = g.at("vocab_size").get<int64_t>();
  const size_t prefill = tokens.size() - 8;
  const std::vector<int32_t> head(tokens.begin(), tokens.begin() + prefill);
  const std::vector<int32_t> tail(tokens.begin() + prefill, tokens.end());
  ModelOptions options;
  options.threads = 2;
  options.backend = BackendKind::kReference;
  auto reference = Model::load(testing_support::golden_checkpoint(g), options);
  options.backend = BackendKind::kCpu;
  auto cpu = Model::load(testing_support::golden_checkpoint(g), options);
  const ModelRun r = run_model(*reference, head, tail), c = run_model(*cpu, head, tail);
  expect_close(c.prefill, r.prefill, vocab, "m3 long prefill");
  expect_close(c.decode, r.decode, vocab, "m3 long decode");
}

TEST(CpuBackendModelThreads, LogitsDoNotDependOnTheThreadCount) {
  const int vocab = 576;
  for (Arch arch : {Arch::kM2, Arch::kM3}) {
    const std::string dir =
        testing_support::tiny_checkpoint(arch, QuantScheme::kFp8Block, 3, vocab);
    const auto tokens = prompt_tokens(70, vocab), extra = prompt_tokens(3, vocab);
    std::vector<ModelRun> runs;
    for (size_t threads : {1, 2, 5}) {
      ModelOptions options;
      options.threads = threads;
      auto model = Model::load(dir, options);
      runs.push_back(run_model(*model, tokens, extra));
    }
    for (size_t i = 1; i < runs.size(); ++i) {
      EXPECT_EQ(runs[i].prefill, runs[0].prefill) << "prefill, run " << i;
      EXPECT_EQ(runs[i].decode, runs[0].decode) << "decode, run " << i;
    }
  }
}

}  // namespace
}  // namespace minimax
