// One pool of worker threads for the process. parallel_for splits [0, n) into contiguous chunks,
// one per thread, so each thread streams its own slice of the data once.
//
// Hand-offs spin briefly before they sleep: a decode step makes ~80 parallel_for calls a few
// microseconds apart, and waking a sleeping thread through the kernel for each cost 10-15% of a
// 2-thread step. Workers poll for the next job, and the caller for the workers' completion, for up
// to spin_microseconds() (default 50; 0 never spins) and then block on a
// condition variable as before, so an idle pool costs nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace minimax {

class ThreadPool {
 public:
  // num_threads = 0 means the number of hardware threads.
  explicit ThreadPool(size_t num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t size() const { return workers_.size() + 1; }  // the calling thread works too

  // Calls fn(begin, end, thread_index) over a split of [0, n) and waits. The first exception thrown
  // by any chunk is rethrown here after all chunks have finished.
  void parallel_for(size_t n, const std::function<void(size_t, size_t, size_t)>& fn);

  // How long a hand-off polls before it sleeps, for pools made from now on: 50 unless set (the
  // command line sets it from MINIMAX_POOL_SPIN_US; the library reads no environment).
  static int64_t spin_microseconds();
  static void set_spin_microseconds(int64_t us);

 private:
  void worker_loop(size_t index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  // Written by parallel_for before generation_ moves on (release), read by the workers after they
  // see it move (acquire).
  const std::function<void(size_t, size_t, size_t)>* job_ = nullptr;
  size_t job_n_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> pending_{0};
  std::exception_ptr error_;  // under mutex_
  bool stop_ = false;         // under mutex_
  int64_t spin_us_ = 0;
};

}  // namespace minimax
