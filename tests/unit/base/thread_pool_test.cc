// ThreadPool: every index runs exactly once at every pool size, exceptions reach the caller, jobs
// run back to back, after the workers have been idle, around the time they stop polling and with no
// polling at all, and the pool can be destroyed either way.
#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace minimax {
namespace {

void expect_each_index_once(ThreadPool& pool, size_t n) {
  std::vector<std::atomic<int>> hits(n);
  pool.parallel_for(n, [&](size_t begin, size_t end, size_t thread) {
    ASSERT_LT(thread, pool.size());
    for (size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
  });
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
}

TEST(ThreadPool, EveryIndexOnceAtEverySize) {
  for (size_t threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (size_t n : {0, 1, 2, 3, 7, 64, 1000}) expect_each_index_once(pool, n);
  }
}

TEST(ThreadPool, BackToBackJobs) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  for (int job = 0; job < 3000; ++job)
    pool.parallel_for(3, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin; i < end; ++i) sum.fetch_add(static_cast<int64_t>(i) + 1);
    });
  EXPECT_EQ(sum.load(), 3000 * 6);
}

TEST(ThreadPool, JobsAfterIdleTime) {
  ThreadPool pool(2);
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    expect_each_index_once(pool, 16);
  }
}

// Gaps around the hand-offs' polling time (ThreadPool::spin_microseconds()), so that jobs arrive
// while workers poll, just as they give up, and while they sleep.
TEST(ThreadPool, JobsAroundThePollingTime) {
  ThreadPool pool(3);
  const int64_t spin = ThreadPool::spin_microseconds();
  for (int64_t gap = 0; gap <= 2 * spin + 10; gap += std::max<int64_t>(1, spin / 10)) {
    std::this_thread::sleep_for(std::chrono::microseconds(gap));
    expect_each_index_once(pool, 9);
    if (HasFatalFailure()) return;
  }
}

TEST(ThreadPool, ExceptionFromAWorkerReachesTheCaller) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(2,
                                 [](size_t begin, size_t, size_t) {
                                   if (begin == 1) throw std::runtime_error("worker chunk");
                                 }),
               std::runtime_error);
  // The pool still works after an error, right away and after idle time.
  expect_each_index_once(pool, 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_THROW(pool.parallel_for(2, [](size_t, size_t, size_t) { throw std::logic_error("all"); }),
               std::logic_error);
  expect_each_index_once(pool, 10);
}

TEST(ThreadPool, DestroyedRightAfterAJobOrWhenIdle) {
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(3);
    expect_each_index_once(pool, 8);
  }  // destroyed right after a job
  ThreadPool pool(3);
  expect_each_index_once(pool, 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
}  // and when idle

// Without polling every hand-off goes through the sleeping path: a worker or the caller that
// announces its sleep just as the other side finishes must still be woken (a lost wake-up hangs
// here), and errors still arrive.
TEST(ThreadPool, HandOffsThatNeverPoll) {
  const int64_t spin = ThreadPool::spin_microseconds();
  ThreadPool::set_spin_microseconds(0);
  {
    ThreadPool pool(3);
    ThreadPool::set_spin_microseconds(spin);  // the pool keeps the value it was made with
    std::atomic<int64_t> sum{0};
    for (int job = 0; job < 2000; ++job) {
      pool.parallel_for(3, [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; ++i) sum.fetch_add(static_cast<int64_t>(i) + 1);
      });
      if (job % 500 == 0)
        EXPECT_THROW(pool.parallel_for(3,
                                       [](size_t begin, size_t, size_t) {
                                         if (begin == 2) throw std::runtime_error("last chunk");
                                       }),
                     std::runtime_error);
    }
    EXPECT_EQ(sum.load(), 2000 * 6);
  }
  ThreadPool::set_spin_microseconds(spin);
}

}  // namespace
}  // namespace minimax
