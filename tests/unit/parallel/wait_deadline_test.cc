// The deadline on waits for other ranks (parallel/wait_deadline.h): a wait that outlasts the
// timeout is reported with its name, a wait that ends in time or with no timeout set is not.
#include "parallel/wait_deadline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace minimax {
namespace {

using namespace std::chrono_literals;

TEST(WaitDeadlineTest, AWaitLongerThanTheTimeoutIsReportedWithItsName) {
  std::promise<std::pair<std::string, double>> reported;
  WaitDeadline deadline([&](const char* what, double waited) {
    reported.set_value({what, waited});
  });
  deadline.set_timeout(0.05);
  WaitDeadline::Scope wait(deadline, "allreduce");
  auto report = reported.get_future();
  // Generous: the watchdog checks every 2.5 ms here; a loaded machine may delay it.
  ASSERT_EQ(report.wait_for(10s), std::future_status::ready);
  const auto [what, waited] = report.get();
  EXPECT_EQ(what, "allreduce");
  EXPECT_GT(waited, 0.05);
}

TEST(WaitDeadlineTest, WaitsThatEndInTimeAreNotReported) {
  std::atomic<bool> reported = false;
  WaitDeadline deadline([&](const char*, double) { reported = true; });
  deadline.set_timeout(0.5);
  for (int i = 0; i < 20; ++i) {
    WaitDeadline::Scope wait(deadline, "broadcast");
    std::this_thread::sleep_for(1ms);
  }
  // Idle (no wait open) for longer than the timeout: not a wait, not reported.
  std::this_thread::sleep_for(700ms);
  EXPECT_FALSE(reported);
}

TEST(WaitDeadlineTest, NoTimeoutMeansWaitingForever) {
  std::atomic<bool> reported = false;
  WaitDeadline deadline([&](const char*, double) { reported = true; });
  EXPECT_EQ(deadline.timeout(), 0);
  WaitDeadline::Scope wait(deadline, "allgather");
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(reported);
}

}  // namespace
}  // namespace minimax
