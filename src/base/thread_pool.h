// One pool of worker threads for the process. parallel_for splits [0, n) into contiguous chunks,
// one per thread, so each thread streams its own slice of the data once.
#pragma once

#include <condition_variable>
#include <cstddef>
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

 private:
  void worker_loop(size_t index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(size_t, size_t, size_t)>* job_ = nullptr;
  size_t job_n_ = 0;
  size_t generation_ = 0;
  size_t pending_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
};

}  // namespace minimax
