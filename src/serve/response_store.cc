// The bounded store of response conversations (serve/response_store.h).
#include "serve/response_store.h"

namespace minimax {

void ResponseStore::put(const std::string& id, const nlohmann::ordered_json& conversation) {
  // Model text may end inside a UTF-8 character; the store keeps what the client was sent.
  std::string text =
      conversation.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::lock_guard lock(mutex_);
  if (text.size() > max_bytes_ || max_responses_ == 0 || entries_.contains(id)) return;
  while (!order_.empty() &&
         (order_.size() >= max_responses_ || bytes_ + text.size() > max_bytes_)) {
    auto oldest = entries_.find(order_.front());
    bytes_ -= oldest->second.size();
    entries_.erase(oldest);
    order_.pop_front();
  }
  bytes_ += text.size();
  order_.push_back(id);
  entries_.emplace(id, std::move(text));
}

std::optional<nlohmann::ordered_json> ResponseStore::find(const std::string& id) const {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    text = it->second;
  }
  return nlohmann::ordered_json::parse(text);
}

size_t ResponseStore::size() const {
  std::lock_guard lock(mutex_);
  return order_.size();
}

size_t ResponseStore::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

}  // namespace minimax
