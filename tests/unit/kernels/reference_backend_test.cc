// Backend selection: the reference table is complete, a partial table is completed with the
// reference ops, and the cpu table never has a hole.
#include <gtest/gtest.h>

#include "base/error.h"
#include "kernels/backend.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

void fake_glu(const float*, const float*, int64_t n, const GluParams&, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = 42.0f;
}

bool complete(const KernelOps& ops) {
  return ops.linear && ops.embedding && ops.rms_norm && ops.rope && ops.attention &&
         ops.select_blocks && ops.route && ops.glu && ops.quantize_activations && ops.moe;
}

TEST(Backend, ReferenceAndCpuTablesAreComplete) {
  EXPECT_TRUE(complete(reference_ops()));
  EXPECT_TRUE(complete(kernel_ops(BackendKind::kCpu)));
  EXPECT_EQ(&kernel_ops(BackendKind::kReference), &reference_ops());
  EXPECT_EQ(reference_ops().moe, &reference::moe);
}

TEST(Backend, MissingOpsFallBackToTheReference) {
  KernelOps partial;
  partial.name = "partial";
  partial.glu = fake_glu;
  const KernelOps full = complete_with_reference(partial);
  EXPECT_TRUE(complete(full));
  EXPECT_STREQ(full.name, "partial");
  EXPECT_EQ(full.glu, &fake_glu);  // provided ops are kept
  EXPECT_EQ(full.linear, &reference::linear);
  EXPECT_EQ(full.attention, &reference::attention);
}

TEST(Backend, NamesParse) {
  EXPECT_EQ(parse_backend_kind("cpu", "--backend"), BackendKind::kCpu);
  EXPECT_EQ(parse_backend_kind("reference", "--backend"), BackendKind::kReference);
  EXPECT_EQ(backend_name(BackendKind::kCpu), "cpu");
  try {
    parse_backend_kind("cuda", "--backend");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--backend"), std::string::npos);
  }
}

}  // namespace
}  // namespace minimax
