// BpeTokenizer: encode (added tokens -> pre-tokenizer -> BPE), decode and lookups.
#include "text/bpe_tokenizer.h"

#include <fstream>
#include <sstream>

#include "base/error.h"
#include "text/bpe_tokenizer_impl.h"
#include "text/utf8.h"

namespace minimax {

BpeTokenizer BpeTokenizer::from_file(const std::string& tokenizer_json_path) {
  std::ifstream in(tokenizer_json_path, std::ios::binary);
  if (!in) fail("{}: cannot open tokenizer file", tokenizer_json_path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", tokenizer_json_path, e.what());
  }
  return from_json(parsed, tokenizer_json_path);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool parse_special) const {
  size_t bad_offset = 0;
  if (!utf8::is_valid(text, &bad_offset)) {
    fail("encode ({}): text is not valid UTF-8 (bad byte at offset {})", impl_->source, bad_offset);
  }
  std::vector<TextSegment> first_pass;
  impl_->raw_matcher.split(text, 0, parse_special, &first_pass);
  std::vector<TextSegment> segments;
  if (impl_->normalized_matcher.empty()) {
    segments = std::move(first_pass);
  } else {
    for (const TextSegment& s : first_pass) {
      if (s.id >= 0) {
        segments.push_back(s);
      } else {
        impl_->normalized_matcher.split(text.substr(s.begin, s.end - s.begin), s.begin,
                                        parse_special, &segments);
      }
    }
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  for (const TextSegment& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
      continue;
    }
    for (const std::string& word :
         impl_->pre_tokenizer.split(text.substr(s.begin, s.end - s.begin))) {
      impl_->model->encode_word(word, &ids);
    }
  }
  return ids;
}

std::vector<TextSegment> BpeTokenizer::special_tokens_in(std::string_view text) const {
  std::vector<TextSegment> first_pass, found;
  impl_->raw_matcher.split(text, 0, true, &first_pass);
  for (const TextSegment& s : first_pass) {
    if (s.id >= 0) {
      if (impl_->id_special[s.id]) found.push_back(s);
      continue;
    }
    if (impl_->normalized_matcher.empty()) continue;
    std::vector<TextSegment> second_pass;
    impl_->normalized_matcher.split(text.substr(s.begin, s.end - s.begin), s.begin, true,
                                    &second_pass);
    for (const TextSegment& t : second_pass)
      if (t.id >= 0 && impl_->id_special[t.id]) found.push_back(t);
  }
  return found;
}

std::string BpeTokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special && impl_->id_special[id]) continue;
    bytes.append(impl_->id_bytes[id]);
  }
  return utf8::lossy(bytes);
}

std::optional<int32_t> BpeTokenizer::token_id(std::string_view token) const {
  if (const auto it = impl_->added_ids.find(token); it != impl_->added_ids.end()) return it->second;
  return impl_->model->token_id(token);
}

std::string_view BpeTokenizer::token_text(int32_t id) const {
  if (id < 0 || id >= vocab_size()) {
    fail("{}: token id {} is outside the vocabulary [0, {})", impl_->source, id, vocab_size());
  }
  return impl_->id_text[id];
}

int32_t BpeTokenizer::vocab_size() const { return static_cast<int32_t>(impl_->id_text.size()); }

bool BpeTokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_size() && impl_->id_special[id] != 0;
}

std::string_view BpeTokenizer::token_bytes(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return impl_->id_bytes[id];
}

const std::vector<AddedToken>& BpeTokenizer::added_tokens() const { return impl_->added_tokens; }

const std::string& BpeTokenizer::source() const { return impl_->source; }

}  // namespace minimax
