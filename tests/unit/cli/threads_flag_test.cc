// --threads (cli/threads_flag.h): "all" for 0 and below, refusal far above the usable CPUs, and the
// cgroup quota read as whole CPUs.
#include "cli/threads_flag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "base/error.h"

namespace minimax::cli {
namespace {

TEST(ResolveThreads, ZeroOrLessMeansEveryUsableCpu) {
  EXPECT_EQ(resolve_threads(0, 6), 6u);
  EXPECT_EQ(resolve_threads(-1, 6), 6u);  // llama.cpp's "all threads"
  EXPECT_EQ(resolve_threads(-32768, 6), 6u);
}

TEST(ResolveThreads, KeepsCountsUpToTwiceTheCpus) {
  EXPECT_EQ(resolve_threads(1, 6), 1u);
  EXPECT_EQ(resolve_threads(12, 6), 12u);
}

TEST(ResolveThreads, RefusesMoreThanTwiceTheCpusNamingFlagAndCount) {
  try {
    resolve_threads(13, 6);
    FAIL() << "13 threads on 6 CPUs accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--threads: 13 threads"), std::string::npos) << message;
    EXPECT_NE(message.find("the 6 CPUs"), std::string::npos) << message;
  }
}

TEST(CgroupQuota, ReadsWholeCpusRoundedUp) {
  EXPECT_EQ(cpus_of_cgroup_quota("200000 100000"), 2u);
  EXPECT_EQ(cpus_of_cgroup_quota("150000 100000"), 2u);  // 1.5 CPUs: two threads can use it
  EXPECT_EQ(cpus_of_cgroup_quota("50000 100000"), 1u);
}

TEST(CgroupQuota, NoLimitOrNoTextIsZero) {
  EXPECT_EQ(cpus_of_cgroup_quota("max 100000"), 0u);
  EXPECT_EQ(cpus_of_cgroup_quota("-1 100000"), 0u);  // cgroup v1's "no limit"
  EXPECT_EQ(cpus_of_cgroup_quota(""), 0u);
}

TEST(UsableCpus, AtLeastOneAndNoMoreThanTheHardware) {
  const size_t cpus = usable_cpus();
  EXPECT_GE(cpus, 1u);
  EXPECT_LE(cpus, std::max(1u, std::thread::hardware_concurrency()));
}

TEST(ThreadsFlag, ParsesMinusOneAsAllAndRefusesTooMany) {
  CLI::App app;
  size_t threads = 0;
  add_threads_flag(&app, threads, "Worker threads");
  EXPECT_EQ(threads, usable_cpus());  // the default
  app.parse("--threads -1");
  EXPECT_EQ(threads, usable_cpus());
  CLI::App other;
  add_threads_flag(&other, threads, "Worker threads");
  const std::string too_many = std::to_string(2 * usable_cpus() + 1);
  EXPECT_THROW(other.parse("--threads " + too_many), Error);
}

}  // namespace
}  // namespace minimax::cli
