// ThreadPool: fixed workers, one contiguous chunk of the range per thread.
#include "base/thread_pool.h"

namespace minimax {

ThreadPool::ThreadPool(size_t num_threads) {
  if (num_threads == 0) num_threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  for (size_t i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

static void run_chunk(const std::function<void(size_t, size_t, size_t)>& fn, size_t n,
                      size_t threads, size_t index) {
  size_t begin = n * index / threads;
  size_t end = n * (index + 1) / threads;
  if (begin < end) fn(begin, end, index);
}

void ThreadPool::parallel_for(size_t n, const std::function<void(size_t, size_t, size_t)>& fn) {
  if (workers_.empty() || n <= 1) {
    if (n > 0) fn(0, n, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    job_n_ = n;
    pending_ = workers_.size();
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  std::exception_ptr mine;
  try {
    run_chunk(fn, n, size(), 0);
  } catch (...) {
    mine = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
  if (mine) std::rethrow_exception(mine);
  if (error_) std::rethrow_exception(error_);
}

void ThreadPool::worker_loop(size_t index) {
  size_t seen = 0;
  for (;;) {
    const std::function<void(size_t, size_t, size_t)>* job;
    size_t n;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
    }
    std::exception_ptr err;
    try {
      run_chunk(*job, n, size(), index);
    } catch (...) {
      err = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (err && !error_) error_ = err;
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }
}

}  // namespace minimax
