// The transport's fixed pool of worker threads (internal to src/serve): the event loop posts
// each complete request as a task; a worker runs the routes, which may wait on the engine for
// as long as the request generates. The pool's size bounds the requests handled at once, not the
// connections.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace minimax {

class WorkerPool {
 public:
  WorkerPool() = default;
  ~WorkerPool() { join(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts `threads` workers (at least one).
  void start(size_t threads);
  void post(std::function<void()> task);
  // Runs the tasks still queued, then stops and joins the workers.
  void join();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace minimax
