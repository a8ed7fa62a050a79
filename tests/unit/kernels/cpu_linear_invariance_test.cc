// Batch invariance of cpu_linear (CpuLinearOptions::batch_invariant): for every weight format, the
// activation precisions batch invariance allows and every ISA level this CPU runs, each token's
// outputs in a call of n tokens are the same bits as in a call of that token alone, for n from 2
// up past the kernels' token-block size, on shapes whose widths end in a partial chunk and whose
// row counts are not multiples of the tiles' rows, on one thread and split across two.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernel_test_util.h"
#include "kernels/cpu/linear.h"
#include "random_weights.h"

namespace minimax {
namespace {

struct InvarianceShape {
  WeightFormat format;
  int64_t rows, cols;  // cols: a partial last chunk for every kernel that has one
};
const InvarianceShape kInvarianceShapes[] = {
    {WeightFormat::kF32, 37, 45},       {WeightFormat::kBF16, 37, 200},
    {WeightFormat::kFp8Block, 70, 200}, {WeightFormat::kFp8Channel, 37, 200},
    {WeightFormat::kMxfp8, 37, 224},    {WeightFormat::kMxfp4, 70, 224},
    {WeightFormat::kNvfp4, 37, 208},    {WeightFormat::kBF16, 6, 1056},
    {WeightFormat::kFp8Block, 9, 1024},
};

// Token counts of the batch calls: every remainder of the 4-token tiles, the sizes of speculative
// verify steps (8-24) and prefill chunks, and 300, more than one token block (at most 256).
const int64_t kTokenCounts[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 24, 31, 64, 300};

struct InvariancePath {
  CpuIsa isa;
  ActivationPrecision activations;
};

std::vector<InvariancePath> invariance_paths() {
  std::vector<InvariancePath> out;
  for (const CpuIsa isa : levels()) out.push_back({isa, ActivationPrecision::kF32});
  if (cpu_supports(CpuIsa::kAvx512) && cpu_features().avx512_bf16) {
    out.push_back({CpuIsa::kAvx512, ActivationPrecision::kBF16});
    out.push_back({CpuIsa::kAvx512, ActivationPrecision::kBF16x2});
  }
  return out;
}

class LinearBatchInvariance : public ::testing::TestWithParam<InvarianceShape> {};

TEST_P(LinearBatchInvariance, EveryTokenGetsTheBitsOfItsOneTokenCall) {
  const InvarianceShape s = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(s.rows * 1000 + s.cols));
  const StoredWeight w = random_weight(s.format, s.rows, s.cols, 0.05, rng);
  constexpr int64_t kMaxTokens = 300;
  const std::vector<float> x = random_floats(static_cast<size_t>(kMaxTokens * s.cols), rng);
  static ThreadPool one(1), two(2);
  for (const InvariancePath& path : invariance_paths()) {
    CpuLinearOptions options;
    options.isa = path.isa;
    options.activations = path.activations;
    options.batch_invariant = true;
    options.min_bytes_per_thread = 0;  // split even these small matrices across both threads
    const std::string name = std::string(weight_format_name(s.format)) + std::string(" ") +
                             std::string(cpu_isa_name(path.isa)) + " " +
                             activation_precision_name(path.activations);
    std::vector<float> alone(static_cast<size_t>(kMaxTokens * s.rows));
    for (int64_t t = 0; t < kMaxTokens; ++t)
      cpu_linear(w.view, x.data() + t * s.cols, 1, alone.data() + t * s.rows, one, options);
    for (const int64_t n : kTokenCounts) {
      for (ThreadPool* pool : {&one, &two}) {
        std::vector<float> batch(static_cast<size_t>(n * s.rows), -1.0f);
        cpu_linear(w.view, x.data(), n, batch.data(), *pool, options);
        for (int64_t t = 0; t < n; ++t) {
          const bool same = std::memcmp(batch.data() + t * s.rows, alone.data() + t * s.rows,
                                        static_cast<size_t>(s.rows) * sizeof(float)) == 0;
          ASSERT_TRUE(same) << name << ": token " << t << " of " << n << " on " << pool->size()
                            << " thread(s) differs from its 1-token call (first value "
                            << batch[t * s.rows] << " vs " << alone[t * s.rows] << ")";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, LinearBatchInvariance, ::testing::ValuesIn(kInvarianceShapes),
                         [](const ::testing::TestParamInfo<InvarianceShape>& info) {
                           std::string name(weight_format_name(info.param.format));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name + "_" + std::to_string(info.param.rows) + "x" +
                                  std::to_string(info.param.cols);
                         });

}  // namespace
}  // namespace minimax
