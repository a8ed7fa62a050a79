// Operations of a prefill (runtime/prefill_flops.h) on the tiny M2 model, by hand from its shapes.
#include "runtime/prefill_flops.h"

#include <gtest/gtest.h>

#include "model/model.h"
#include "runtime_fixture.h"

namespace minimax {
namespace {

// Tiny M2 (checkpoint/tiny_config.h): 3 layers, hidden 64, q 8×16, kv 2×16, 16 experts of width 32,
// top-4.
TEST(PrefillFlopsTest, TinyM2ByHand) {
  ModelOptions options;
  options.threads = 1;
  auto model = Model::load(runtime_test::tiny_model_dir(Arch::kM2), options);
  const PrefillFlops f = prefill_flops(model->weights(), model->config());
  // q [128,64], k and v [32,64], o [64,128]; router [16,64]; 4 experts of gate, up [32,64], down.
  const double per_layer = 128 * 64 + 2 * 32 * 64 + 64 * 128 + 16 * 64 + 4.0 * 3 * 32 * 64;
  EXPECT_DOUBLE_EQ(f.per_token, 3 * per_layer);
  EXPECT_DOUBLE_EQ(f.lm_head, static_cast<double>(model->config().vocab_size) * 64);
  // lm_head once per chunk: 10 tokens in chunks of 4 are 3 chunks.
  EXPECT_DOUBLE_EQ(f.total(10, 4), 2 * (10 * f.per_token + 3 * f.lm_head));
  EXPECT_DOUBLE_EQ(f.total(512, 512), 2 * (512 * f.per_token + f.lm_head));
}

}  // namespace
}  // namespace minimax
