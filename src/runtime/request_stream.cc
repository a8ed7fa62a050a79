// The engine → consumer channel of one request (runtime/request_stream.h).
#include "runtime/request_stream.h"

#include <utility>

namespace minimax {
namespace {

// Appends `next` to `into`: token lists concatenate, the other fields take the latest value
// that is set.
void merge(EngineEvent& into, EngineEvent&& next) {
  for (TokenOutput& token : next.tokens) into.tokens.push_back(std::move(token));
  if (!next.prompt_logprobs.empty()) into.prompt_logprobs = std::move(next.prompt_logprobs);
  if (next.finished) {
    into.finished = true;
    into.finish_reason = std::move(next.finish_reason);
    into.stop_string = std::move(next.stop_string);
    into.stop_token = next.stop_token;
    into.error = std::move(next.error);
  }
  into.prompt_tokens = next.prompt_tokens;
  into.cached_prompt_tokens = next.cached_prompt_tokens;
  into.completion_tokens = next.completion_tokens;
}

}  // namespace

RequestStream::RequestStream(std::function<void()> wake_engine)
    : wake_engine_(std::move(wake_engine)) {}

bool RequestStream::wait(EngineEvent& event, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (finish_delivered_) return false;
  if (!ready_.wait_for(lock, timeout, [&] { return has_pending_; })) return false;
  event = std::move(pending_);
  pending_ = EngineEvent{};
  has_pending_ = false;
  if (event.finished) finish_delivered_ = true;
  return true;
}

void RequestStream::cancel() {
  if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
  if (wake_engine_) wake_engine_();
}

bool RequestStream::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finish_pushed_;
}

void RequestStream::push(EngineEvent event) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finish_pushed_) return;
    finish_pushed_ = event.finished;
    merge(pending_, std::move(event));
    has_pending_ = true;
  }
  ready_.notify_all();
}

}  // namespace minimax
