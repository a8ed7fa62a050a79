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
  // The mutex and condition variables serve only threads that stopped polling: a hand-off between
  // polling threads takes no lock (on 2 threads a decode step's ~80 locked hand-offs met in the
  // mutex, each a futex sleep and wake when they did). Sleepers announce themselves
  // (sleeping_workers_, caller_sleeping_) before their last check, and the other side locks and
  // notifies only when it sees them: with sequentially consistent accesses one of the two always
  // sees the other's write.
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  // Written by parallel_for before generation_ moves on, read by the workers after they see it
  // move; unchanged until every worker has counted itself out of pending_.
  const std::function<void(size_t, size_t, size_t)>* job_ = nullptr;
  size_t job_n_ = 0;
  std::atomic<uint64_t> generation_{0};
  std::atomic<size_t> pending_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::exception_ptr error_;         // under mutex_
  std::atomic<bool> failed_{false};  // error_ is set
  std::atomic<bool> stop_{false};    // set before generation_ moves
  int64_t spin_us_ = 0;
};

}  // namespace minimax
