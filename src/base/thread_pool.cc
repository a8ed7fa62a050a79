// ThreadPool: fixed workers, one contiguous chunk of the range per thread; hand-offs poll briefly,
// then sleep on condition variables (a lock only where a thread sleeps).
#include "base/thread_pool.h"

#include <atomic>
#include <chrono>
#include <string>

#include "base/error.h"

namespace minimax {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls `done` for up to `microseconds`; true if it became true.
template <class Done>
bool spin_until(Done done, int64_t microseconds) {
  if (microseconds <= 0) return done();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(microseconds);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return done();
  }
}

void run_chunk(const std::function<void(size_t, size_t, size_t)>& fn, size_t n, size_t threads,
               size_t index) {
  size_t begin = n * index / threads;
  size_t end = n * (index + 1) / threads;
  if (begin < end) fn(begin, end, index);
}

}  // namespace

namespace {
std::atomic<int64_t> g_spin_us{50};
}  // namespace

int64_t ThreadPool::spin_microseconds() { return g_spin_us.load(std::memory_order_relaxed); }

void ThreadPool::set_spin_microseconds(int64_t us) {
  if (us < 0 || us > 1000000)
    fail("pool spin: {} is not a number of microseconds from 0 to 1000000", us);
  g_spin_us.store(us, std::memory_order_relaxed);
}

ThreadPool::ThreadPool(size_t num_threads) : spin_us_(spin_microseconds()) {
  if (num_threads == 0) num_threads = std::max<size_t>(1, std::thread::hardware_concurrency());
  for (size_t i = 1; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(1);  // wakes the polling workers
  {
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();  // and the sleeping ones
  }
  for (auto& t : workers_) t.join();
}

void ThreadPool::parallel_for(size_t n, const std::function<void(size_t, size_t, size_t)>& fn) {
  if (workers_.empty() || n <= 1) {
    if (n > 0) fn(0, n, 0);
    return;
  }
  // Every worker counted itself out of the last job after its last write, so nothing races here.
  job_ = &fn;
  job_n_ = n;
  error_ = nullptr;
  failed_.store(false, std::memory_order_relaxed);
  pending_.store(workers_.size(), std::memory_order_relaxed);
  generation_.fetch_add(1);  // publishes the above
  if (sleeping_workers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();
  }
  std::exception_ptr mine;
  try {
    run_chunk(fn, n, size(), 0);
  } catch (...) {
    mine = std::current_exception();
  }
  const auto finished = [this] { return pending_.load() == 0; };
  if (!spin_until(finished, spin_us_)) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true);
    done_cv_.wait(lock, finished);
    caller_sleeping_.store(false);
  }
  job_ = nullptr;
  if (mine) std::rethrow_exception(mine);
  if (failed_.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::rethrow_exception(error_);
  }
}

void ThreadPool::worker_loop(size_t index) {
  uint64_t seen = 0;
  for (;;) {
    const auto moved = [&] { return generation_.load() != seen; };
    if (!spin_until(moved, spin_us_)) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_workers_.fetch_add(1);
      start_cv_.wait(lock, moved);
      sleeping_workers_.fetch_sub(1);
    }
    seen = generation_.load();
    if (stop_.load()) return;
    std::exception_ptr err;
    try {
      run_chunk(*job_, job_n_, size(), index);
    } catch (...) {
      err = std::current_exception();
    }
    if (err) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = err;
      failed_.store(true, std::memory_order_relaxed);
    }
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_all();
    }
  }
}

}  // namespace minimax
