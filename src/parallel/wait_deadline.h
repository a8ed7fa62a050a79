// A deadline on the calls in which a rank waits for the others (the collectives): a watchdog
// thread sees a wait that has lasted longer than the timeout and calls `expired`, which ends the
// job. Open MPI's TCP transport never gives up on a link that went silent (a cable pulled, a host
// frozen, every packet dropped), so without this every rank would wait forever. It counts waiting
// time, not silence: a rank that computes longer than the timeout while another waits for it looks
// the same as a dead one, so the timeout must exceed the longest legitimate imbalance within one
// step (docs/parallel.md, "Failures").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace minimax {

class WaitDeadline {
 public:
  // Called on the watchdog thread with the name of the call and the seconds waited so far; meant
  // not to return (it ends the process). If it returns, the watchdog stops watching.
  using Expired = std::function<void(const char* what, double waited_seconds)>;

  explicit WaitDeadline(Expired expired);
  ~WaitDeadline();  // stops the watchdog thread
  WaitDeadline(const WaitDeadline&) = delete;
  WaitDeadline& operator=(const WaitDeadline&) = delete;

  // 0 (the start): no deadline. The first positive value starts the watchdog thread.
  void set_timeout(double seconds);
  double timeout() const { return timeout_ns_.load() * 1e-9; }

  // A wait named `what` (a string literal) from construction to destruction. Waits do not nest
  // and come from one thread at a time (the communicator's callers are serialized).
  class Scope {
   public:
    Scope(WaitDeadline& deadline, const char* what);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    WaitDeadline& deadline_;
  };

 private:
  void watch();

  Expired expired_;
  std::atomic<int64_t> timeout_ns_{0};
  std::atomic<int64_t> waiting_since_ns_{0};  // steady clock; 0 when not waiting
  std::atomic<const char*> waiting_in_{nullptr};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread watchdog_;
};

}  // namespace minimax
