// bench warns when a run got a low CPU share (issue 39: nothing warned, and a busy machine's
// speeds were read as its own): which shares warn, and that the warning names them all.
#include "cli/bench_cpu_share.h"

#include <gtest/gtest.h>

namespace minimax::cli {
namespace {

TEST(BenchCpuShare, AFullShareDoesNotWarn) {
  EXPECT_EQ(low_cpu_share_warning({0.98, 0.95, 0.99}, 16), "");
  EXPECT_EQ(low_cpu_share_warning({kLowCpuShare, kLowCpuShare, kLowCpuShare}, 16), "");
}

TEST(BenchCpuShare, AnyLowShareWarnsNamingEveryShare) {
  const std::string decode = low_cpu_share_warning({0.41, 0.93, 0.97}, 8);
  EXPECT_NE(decode.find("8 thread(s)"), std::string::npos) << decode;
  EXPECT_NE(decode.find("decode 0.41"), std::string::npos) << decode;
  EXPECT_NE(decode.find("prefill 0.93"), std::string::npos) << decode;
  EXPECT_NE(decode.find("bandwidth test 0.97"), std::string::npos) << decode;
  EXPECT_NE(low_cpu_share_warning({0.9, 0.5, 0.9}, 8), "");
  EXPECT_NE(low_cpu_share_warning({0.9, 0.9, 0.69}, 8), "");
}

}  // namespace
}  // namespace minimax::cli
