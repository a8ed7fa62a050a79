// Stored responses (POST /v1/responses with `store`): each response object, for GET and DELETE
// /v1/responses/{id}, and its conversation, for `previous_response_id`. In memory and bounded: at
// most kMaxResponses responses and kMaxBytes of their serialised objects and conversations; the
// oldest are evicted first. A conversation is kept whole (each response holds
// its full history, instructions aside, as template messages), so a follow-up needs one lookup and
// an evicted ancestor never breaks a younger response. Thread-safe: handlers run on several
// workers. Nothing survives a restart.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

namespace minimax {

class ResponseStore {
 public:
  static constexpr size_t kMaxResponses = 1000;
  static constexpr size_t kMaxBytes = size_t{64} << 20;  // 64 MiB

  explicit ResponseStore(size_t max_responses = kMaxResponses, size_t max_bytes = kMaxBytes)
      : max_responses_(max_responses), max_bytes_(max_bytes) {}

  // Keeps `response` and `conversation` under `id`, evicting the oldest until both bounds hold.
  // One larger than max_bytes on its own is not kept (a later lookup of it is a 404, as for an
  // evicted one).
  void put(const std::string& id, const nlohmann::ordered_json& conversation,
           const nlohmann::ordered_json& response);
  // The conversation / response object stored under `id`, or nullopt when unknown or evicted.
  std::optional<nlohmann::ordered_json> find_conversation(const std::string& id) const;
  std::optional<nlohmann::ordered_json> find_response(const std::string& id) const;
  // Forgets `id`; false when it was not stored.
  bool erase(const std::string& id);

  size_t size() const;
  size_t bytes() const;

 private:
  const size_t max_responses_, max_bytes_;
  mutable std::mutex mutex_;
  struct Entry {
    std::string conversation, response;  // as JSON text
    size_t bytes() const { return conversation.size() + response.size(); }
  };
  std::optional<nlohmann::ordered_json> find(const std::string& id, std::string Entry::*text) const;

  std::deque<std::string> order_;                   // ids, oldest first
  std::unordered_map<std::string, Entry> entries_;  // id → its texts
  size_t bytes_ = 0;
};

}  // namespace minimax
