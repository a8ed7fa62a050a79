// The watchdog of parallel/wait_deadline.h.
#include "parallel/wait_deadline.h"

#include <algorithm>
#include <chrono>

namespace minimax {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

WaitDeadline::WaitDeadline(Expired expired) : expired_(std::move(expired)) {}

WaitDeadline::~WaitDeadline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void WaitDeadline::set_timeout(double seconds) {
  timeout_ns_.store(seconds > 0 ? static_cast<int64_t>(seconds * 1e9) : 0);
  std::lock_guard<std::mutex> lock(mutex_);
  if (seconds > 0 && !watchdog_.joinable()) watchdog_ = std::thread([this] { watch(); });
}

WaitDeadline::Scope::Scope(WaitDeadline& deadline, const char* what) : deadline_(deadline) {
  deadline_.waiting_in_.store(what, std::memory_order_relaxed);
  deadline_.waiting_since_ns_.store(now_ns(), std::memory_order_release);
}

WaitDeadline::Scope::~Scope() { deadline_.waiting_since_ns_.store(0, std::memory_order_release); }

void WaitDeadline::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    const int64_t timeout = timeout_ns_.load();
    // Checked 20 times per timeout (at most every 250 ms): a dead link is noticed within 5% late.
    const auto period =
        std::chrono::nanoseconds(std::clamp<int64_t>(timeout / 20, 1'000'000, 250'000'000));
    if (wake_.wait_for(lock, period, [this] { return stop_; })) return;
    const int64_t since = waiting_since_ns_.load(std::memory_order_acquire);
    if (timeout == 0 || since == 0) continue;
    const int64_t waited = now_ns() - since;
    if (waited <= timeout) continue;
    // A wait that ends now is not a dead link: the scope clears `since` before it returns.
    if (waiting_since_ns_.load(std::memory_order_acquire) != since) continue;
    lock.unlock();
    expired_(waiting_in_.load(std::memory_order_relaxed), waited * 1e-9);
    return;
  }
}

}  // namespace minimax
