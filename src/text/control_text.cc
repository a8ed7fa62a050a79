#include "text/control_text.h"

#include <algorithm>

namespace minimax {
namespace {

constexpr std::string_view kOpen = "\xEE\x80\x80";   // U+E000
constexpr std::string_view kClose = "\xEE\x80\x81";  // U+E001

}  // namespace

ControlTextGuard::ControlTextGuard(BpeTokenizer tokenizer)
    : tokenizer_(std::move(tokenizer)), by_first_byte_(256) {
  guarded_.emplace_back(kOpen);
  for (const AddedToken& token : tokenizer_.added_tokens())
    if (token.special && !token.content.empty()) guarded_.push_back(token.content);
  for (uint32_t i = 0; i < guarded_.size(); ++i)
    by_first_byte_[static_cast<unsigned char>(guarded_[i][0])].push_back(i);
  for (auto& list : by_first_byte_)
    std::stable_sort(list.begin(), list.end(), [this](uint32_t a, uint32_t b) {
      return guarded_[a].size() > guarded_[b].size();
    });
}

std::string ControlTextGuard::protect(std::string_view text,
                                      std::span<const std::string> kept) const {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    int match = -1;
    for (const uint32_t i : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
      const std::string& s = guarded_[i];
      if (text.compare(pos, s.size(), s) == 0) {
        match = static_cast<int>(i);
        break;
      }
    }
    if (match < 0 || std::find(kept.begin(), kept.end(), guarded_[match]) != kept.end()) {
      const size_t skip = match < 0 ? 1 : guarded_[match].size();
      out.append(text.substr(pos, skip));
      pos += skip;
      continue;
    }
    out += kOpen;
    out += std::to_string(match);
    out += kClose;
    pos += guarded_[match].size();
  }
  return out;
}

std::string ControlTextGuard::restore(std::string_view text) const {
  std::string out;
  size_t pos = 0;
  for (size_t open; (open = text.find(kOpen, pos)) != std::string_view::npos;) {
    out.append(text.substr(pos, open - pos));
    size_t at = open + kOpen.size(), number = 0, digits = 0;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9' && digits < 6; ++at, ++digits)
      number = number * 10 + static_cast<size_t>(text[at] - '0');
    if (digits > 0 && number < guarded_.size() && text.compare(at, kClose.size(), kClose) == 0) {
      out += guarded_[number];
      pos = at + kClose.size();
    } else {  // not a placeholder (a template cut one apart): the character stays
      out += kOpen;
      pos = open + kOpen.size();
    }
  }
  out.append(text.substr(pos));
  return out;
}

std::vector<int32_t> ControlTextGuard::encode(std::string_view rendered) const {
  if (rendered.find(kOpen) == std::string_view::npos) return tokenizer_.encode(rendered);
  std::vector<int32_t> ids;
  size_t pos = 0;
  const auto plain = [&](size_t end) {
    if (end <= pos) return;
    const std::vector<int32_t> piece = tokenizer_.encode(restore(rendered.substr(pos, end - pos)),
                                                         /*parse_special=*/false);
    ids.insert(ids.end(), piece.begin(), piece.end());
  };
  for (const TextSegment& special : tokenizer_.special_tokens_in(rendered)) {
    plain(special.begin);
    ids.push_back(special.id);
    pos = special.end;
  }
  plain(rendered.size());
  return ids;
}

nlohmann::ordered_json ControlTextGuard::protect_messages(
    const nlohmann::ordered_json& messages, std::span<const std::string> assistant_kept) const {
  nlohmann::ordered_json out = messages;
  if (!out.is_array()) return out;
  for (auto& message : out) {
    if (!message.is_object()) continue;
    const bool assistant = message.value("role", "") == "assistant";
    const std::span<const std::string> kept =
        assistant ? assistant_kept : std::span<const std::string>();
    const auto guard = [&](nlohmann::ordered_json& value) {
      if (value.is_string()) value = protect(value.get_ref<const std::string&>(), kept);
    };
    if (auto content = message.find("content"); content != message.end()) {
      guard(*content);
      if (content->is_array())
        for (auto& part : *content)
          if (part.is_object() && part.contains("text")) guard(part["text"]);
    }
    for (const char* key : {"reasoning_content", "name"})
      if (auto value = message.find(key); value != message.end()) guard(*value);
    if (auto calls = message.find("tool_calls"); calls != message.end())
      *calls = protect_json(*calls);
  }
  return out;
}

nlohmann::ordered_json ControlTextGuard::protect_json(const nlohmann::ordered_json& value) const {
  if (value.is_string()) return protect(value.get_ref<const std::string&>());
  if (value.is_array()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& item : value) out.push_back(protect_json(item));
    return out;
  }
  if (!value.is_object()) return value;
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, item] : value.items()) out[protect(key)] = protect_json(item);
  return out;
}

}  // namespace minimax
