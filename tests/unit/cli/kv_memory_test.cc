// serve's --kv-cache-memory auto (src/cli/kv_memory.h): the share of the memory left after the
// weights, split among the ranks of a host, capped at what the requests could fill; an Error when
// nothing is left; and the host facts it reads (/proc/meminfo, cgroup limits).
#include "cli/kv_memory.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace minimax::cli {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

KvMemoryInputs host_of(int64_t memory, int64_t weights) {
  KvMemoryInputs in;
  in.host_bytes = memory;
  in.weights_bytes = weights;
  in.reserve_bytes = kGiB;
  in.bytes_per_token = 248 * 1024;  // MiniMax-M2.5 at bf16: 62 layers × 2 × 8 heads × 128 × 2 B
  in.tokens_wanted = 16 * 196608;   // 16 requests of its whole context
  return in;
}

TEST(KvMemory, TheShareOfWhatTheWeightsLeave) {
  // M2.5 in block FP8 (230 GB) on a 512 GiB host: 0.9 × (512 − 214.2 − 1) GiB.
  const int64_t weights = 230'000'000'000;
  const KvMemoryPlan plan = plan_kv_memory(host_of(512 * kGiB, weights));
  const int64_t want = static_cast<int64_t>(0.9 * double(512 * kGiB - weights - kGiB));
  EXPECT_EQ(plan.bytes, want);
  EXPECT_FALSE(plan.capped);
  // ~1.1M tokens: the whole 196,608-token context several times over, where 1 GiB held 4.2K.
  EXPECT_GT(plan.bytes / (248 * 1024), 1'000'000);
  EXPECT_NE(plan.summary.find("tokens at 253952 bytes each"), std::string::npos) << plan.summary;
}

TEST(KvMemory, RanksOnOneHostSplitIt) {
  KvMemoryInputs in = host_of(512 * kGiB, 100 * kGiB);
  const int64_t alone = plan_kv_memory(in).bytes;
  in.ranks_on_host = 2;
  EXPECT_EQ(plan_kv_memory(in).bytes, alone / 2);
  EXPECT_NE(plan_kv_memory(in).summary.find("/ 2 ranks"), std::string::npos);
}

TEST(KvMemory, NoMoreThanTheRequestsCouldFill) {
  KvMemoryInputs in = host_of(64 * kGiB, kGiB);
  in.bytes_per_token = 1024;
  in.tokens_wanted = 16 * 4096;
  const KvMemoryPlan plan = plan_kv_memory(in);
  EXPECT_TRUE(plan.capped);
  EXPECT_EQ(plan.bytes, 16 * 4096 * 1024);
  EXPECT_NE(plan.summary.find("capped at what 65536 tokens fill"), std::string::npos);
}

TEST(KvMemory, NothingLeftIsAnErrorNamingWhatTookIt) {
  try {
    plan_kv_memory(host_of(192 * kGiB, 230'000'000'000));
    FAIL() << "accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--kv-cache-memory auto: nothing is left"), std::string::npos);
    EXPECT_NE(message.find("the weights take 214.20 GiB"), std::string::npos) << message;
  }
  KvMemoryInputs in = host_of(512 * kGiB, kGiB);
  in.utilization = 1.5;
  EXPECT_THROW(plan_kv_memory(in), Error);
}

TEST(KvMemory, HostFacts) {
  EXPECT_EQ(mem_total_of_meminfo("MemTotal:       24545216 kB\nMemFree:  1 kB\n"),
            int64_t{24545216} * 1024);
  EXPECT_EQ(mem_total_of_meminfo("HugePages_Total:       0\nMemTotal: 2048 kB\n"), 2048 * 1024);
  EXPECT_EQ(mem_total_of_meminfo("MemFree: 5 kB\n"), 0);
  EXPECT_EQ(bytes_of_cgroup_limit("max"), 0);
  EXPECT_EQ(bytes_of_cgroup_limit(""), 0);
  EXPECT_EQ(bytes_of_cgroup_limit("8589934592"), 8 * kGiB);
  EXPECT_EQ(bytes_of_cgroup_limit("9223372036854771712"), 0);  // cgroup v1's "no limit"
  EXPECT_GT(usable_memory_bytes(), 0);
}

}  // namespace
}  // namespace minimax::cli
