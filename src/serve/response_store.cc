// The bounded store of responses and their conversations (serve/response_store.h).
#include "serve/response_store.h"

#include <algorithm>

#include "serve/openai_response.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

void ResponseStore::put(const std::string& id, const Json& conversation, const Json& response) {
  // json_text: model text may end inside a UTF-8 character; the store keeps what the client got.
  Entry entry{json_text(conversation), json_text(response)};
  const size_t size = entry.bytes();
  std::lock_guard lock(mutex_);
  if (size > max_bytes_ || max_responses_ == 0 || entries_.contains(id)) return;
  while (!order_.empty() && (order_.size() >= max_responses_ || bytes_ + size > max_bytes_)) {
    auto oldest = entries_.find(order_.front());
    bytes_ -= oldest->second.bytes();
    entries_.erase(oldest);
    order_.pop_front();
  }
  bytes_ += size;
  order_.push_back(id);
  entries_.emplace(id, std::move(entry));
}

std::optional<Json> ResponseStore::find(const std::string& id, std::string Entry::*text) const {
  std::string copy;  // parsed outside the lock
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    copy = it->second.*text;
  }
  return Json::parse(copy);
}

std::optional<Json> ResponseStore::find_conversation(const std::string& id) const {
  return find(id, &Entry::conversation);
}

std::optional<Json> ResponseStore::find_response(const std::string& id) const {
  return find(id, &Entry::response);
}

bool ResponseStore::erase(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  bytes_ -= it->second.bytes();
  entries_.erase(it);
  // At most kMaxResponses ids: a linear search is cheap next to the request around it.
  order_.erase(std::find(order_.begin(), order_.end(), id));
  return true;
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
