// The preorder vocabulary trie (text/grammar/token_trie.h).
#include "text/grammar/token_trie.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "text/grammar/utf8_decoder.h"

namespace minimax {
TokenTrie::TokenTrie(const BpeTokenizer& tokenizer) {
  vocab_size_ = tokenizer.vocab_size();
  std::vector<std::string> bytes(vocab_size_);
  for (int32_t id = 0; id < vocab_size_; ++id) {
    if (tokenizer.is_special(id)) {
      special_.emplace(std::string(tokenizer.token_text(id)), id);
      continue;
    }
    bytes[id] = std::string(tokenizer.token_bytes(id));
  }
  // Added tokens, special or not, are whole symbols: the tokenizer always splits them out of
  // text, and a marker such as </think> must not pass for its bytes inside free text.
  for (const AddedToken& added : tokenizer.added_tokens()) {
    special_.emplace(added.content, added.id);
    if (added.id >= 0 && added.id < vocab_size_) bytes[added.id].clear();
  }
  build(bytes);
}

TokenTrie::TokenTrie(const std::vector<std::string>& tokens,
                     const std::unordered_map<std::string, int32_t>& special)
    : special_(special) {
  vocab_size_ = static_cast<int32_t>(tokens.size());
  std::vector<std::string> bytes = tokens;
  for (const auto& [text, id] : special_) {
    if (id < 0 || id >= vocab_size_) fail("token trie: special token id {} out of range", id);
    bytes[id].clear();
  }
  build(bytes);
}

const std::array<std::array<uint64_t, 2>, TokenTrie::kAsciiClasses>& TokenTrie::text_classes() {
  static const std::array<std::array<uint64_t, 2>, kAsciiClasses> classes = [] {
    auto set = [](std::array<uint64_t, 2>& s, int b, bool on) {
      if (on)
        s[b >> 6] |= uint64_t{1} << (b & 63);
      else
        s[b >> 6] &= ~(uint64_t{1} << (b & 63));
    };
    std::array<std::array<uint64_t, 2>, kAsciiClasses> c{};
    for (int b = 0x20; b < 0x7f; ++b)
      for (int k = 0; k < 3; ++k) set(c[k], b, true);
    set(c[0], '"', false), set(c[0], '\\', false);
    for (int k = 1; k < 3; ++k) set(c[k], '\n', true), set(c[k], '\t', true);
    set(c[1], '<', false);
    c[3] = {~uint64_t{0}, ~uint64_t{0}};
    return c;
  }();
  return classes;
}

std::optional<int32_t> TokenTrie::special_token(std::string_view text) const {
  auto it = special_.find(std::string(text));
  if (it == special_.end()) return std::nullopt;
  return it->second;
}

void TokenTrie::build(const std::vector<std::string>& bytes_by_id) {
  std::vector<int32_t> order;
  bytes_begin_.push_back(0);
  for (int32_t id = 0; id < static_cast<int32_t>(bytes_by_id.size()); ++id) {
    if (!bytes_by_id[id].empty()) order.push_back(id);
    bytes_ += bytes_by_id[id];
    bytes_begin_.push_back(static_cast<uint32_t>(bytes_.size()));
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return bytes_by_id[a] < bytes_by_id[b]; });
  // Sorted strings enter a preorder trie left to right: each one shares the path of its common
  // prefix with the previous string, closes the deeper nodes of that one and opens its own.
  std::vector<uint32_t> path;  // node index per depth - 1
  std::string_view previous;
  std::vector<uint32_t> owner;  // node of each entry of tokens_
  for (int32_t id : order) {
    const std::string_view s = bytes_by_id[id];
    size_t common = 0;
    while (common < std::min(s.size(), previous.size()) && s[common] == previous[common]) ++common;
    while (path.size() > common) {
      subtree_end_[path.back()] = static_cast<uint32_t>(byte_.size());
      path.pop_back();
    }
    for (size_t d = common; d < s.size(); ++d) {
      path.push_back(static_cast<uint32_t>(byte_.size()));
      byte_.push_back(static_cast<uint8_t>(s[d]));
      if (d + 1 > 0xffff) fail("token trie: token {} is longer than 65535 bytes", id);
      depth_.push_back(static_cast<uint16_t>(d + 1));
      subtree_end_.push_back(0);
    }
    max_depth_ = std::max(max_depth_, s.size());
    tokens_.push_back(id);
    token_chars_.push_back(static_cast<uint16_t>(std::count_if(
        s.begin(), s.end(), [](char c) { return is_char_start(static_cast<uint8_t>(c)); })));
    owner.push_back(path.back());
    previous = s;
  }
  while (!path.empty()) {
    subtree_end_[path.back()] = static_cast<uint32_t>(byte_.size());
    path.pop_back();
  }
  // Tokens were appended in preorder of their nodes, so each node's tokens are one run.
  token_begin_.assign(byte_.size() + 1, 0);
  for (uint32_t node : owner) ++token_begin_[node + 1];
  std::partial_sum(token_begin_.begin(), token_begin_.end(), token_begin_.begin());
  // Classes of subtrees, children before parents: node i's subtree is (i, subtree_end(i)). The
  // UTF-8 classes follow a UTF-8 decoder: valid[k][i] has bit s when the subtree read from
  // decoder state s is well formed (ASCII from class k at character starts).
  const auto& classes = text_classes();
  const size_t n = byte_.size();
  std::array<std::vector<uint8_t>, kAsciiClasses> valid;
  for (auto& v : valid) v.assign(n, 0);
  subtree_classes_.assign(n, 0);
  subtree_chars_.assign(n, 0);
  for (size_t i = n; i-- > 0;) {
    const uint8_t b = byte_[i];
    uint8_t in_class = 0;  // the byte itself, then (in `ascii`) the whole subtree
    for (int k = 0; k < kAsciiClasses; ++k)
      if (b < 0x80 && ((classes[k][b >> 6] >> (b & 63)) & 1)) in_class |= 1 << k;
    uint8_t ascii = in_class;
    std::array<uint8_t, kAsciiClasses> children;
    children.fill(0xff);
    int chars = 0;
    // The children are the nodes right after i and after each child's subtree.
    for (size_t child = i + 1; child < subtree_end_[i]; child = subtree_end_[child]) {
      ascii &= subtree_classes_[child];
      for (int k = 0; k < kAsciiClasses; ++k) children[k] &= valid[k][child];
      chars = std::max(chars, static_cast<int>(subtree_chars_[child]));
    }
    uint8_t text = 0;
    for (int k = 0; k < kAsciiClasses; ++k) {
      for (int state = 0; state < kUtf8States; ++state) {
        const int next = utf8_step(state, b, (in_class >> k) & 1);
        if (next >= 0 && ((children[k] >> next) & 1)) valid[k][i] |= 1 << state;
      }
      if (valid[k][i] & 1) text |= 1 << k;
    }
    subtree_classes_[i] = static_cast<uint8_t>((ascii & 0x0f) | text << kAsciiClasses);
    subtree_chars_[i] = static_cast<uint8_t>(std::min(255, chars + (is_char_start(b) ? 1 : 0)));
  }
}

}  // namespace minimax
