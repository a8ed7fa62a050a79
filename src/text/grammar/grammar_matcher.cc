// Token masks and token advances over a grammar automaton (text/grammar/grammar_matcher.h).
#include "text/grammar/grammar_matcher.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {
namespace {

// Bounds one request's automaton: about 1 KiB of successor table per state. A JSON walk over a
// 200K vocabulary visits a few hundred; past the bound the tables are rebuilt from the current
// state.
constexpr size_t kMaxStates = 8192;
// Masks kept per request (25 KiB each for a 200K vocabulary).
constexpr size_t kMaxCachedMasks = 64;

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<const TokenTrie> vocab,
                               std::vector<int32_t> end_tokens)
    : vocab_(std::move(vocab)),
      automaton_(std::move(grammar)),
      end_tokens_(std::move(end_tokens)),
      state_(automaton_.start()) {
  for (const std::string& marker : automaton_.grammar().markers) {
    std::optional<int32_t> id = vocab_->special_token(marker);
    if (!id) fail("grammar: marker '{}' is not a special token of the vocabulary", marker);
    marker_tokens_.push_back(*id);
  }
  for (int32_t t : end_tokens_)
    if (t < 0 || t >= vocab_->vocab_size())
      fail("grammar: end token {} is outside the vocabulary of {}", t, vocab_->vocab_size());
  none_.assign((static_cast<size_t>(vocab_->vocab_size()) + 63) / 64, 0);
  walk_.resize(vocab_->max_depth() + 1);
}

void GrammarMatcher::compute_mask(int32_t state, TokenBitmask& mask) {
  mask.assign(none_.size(), 0);
  const TokenTrie& trie = *vocab_;
  walk_[0] = state;
  const size_t n = trie.node_count();
  // The looping classes of the last state asked: most nodes share a state.
  int32_t loops_of = -1;
  uint8_t loops = 0;
  for (size_t i = 0; i < n;) {
    const uint16_t depth = trie.depth(i);
    const int32_t from = walk_[depth - 1];
    if (from != loops_of) loops_of = from, loops = looping_classes(from);
    // Every byte of the subtree loops back to `from` (inside a JSON string, most ASCII text):
    // all its tokens are allowed, without visiting its nodes.
    if (trie.subtree_classes(i) & loops) {
      for (auto [t, end] = trie.subtree_tokens(i); t != end; ++t)
        mask[static_cast<size_t>(*t) >> 6] |= uint64_t{1} << (*t & 63);
      i = trie.subtree_end(i);
      continue;
    }
    const int32_t next = automaton_.next(from, trie.byte(i));
    if (next == GrammarAutomaton::kDead) {
      i = trie.subtree_end(i);  // no token through this prefix
      continue;
    }
    walk_[depth] = next;
    for (auto [t, end] = trie.node_tokens(i); t != end; ++t)
      mask[static_cast<size_t>(*t) >> 6] |= uint64_t{1} << (*t & 63);
    ++i;
  }
  for (size_t m = 0; m < marker_tokens_.size(); ++m)
    if (automaton_.next(state, marker_symbol(static_cast<int>(m))) != GrammarAutomaton::kDead)
      mask[static_cast<size_t>(marker_tokens_[m]) >> 6] |= uint64_t{1} << (marker_tokens_[m] & 63);
  // An end token ends the request whatever its bytes (the engine stops at it), so it is allowed
  // exactly where the sentence is complete, even when it is also an ordinary token.
  const bool accepting = automaton_.accepting(state);
  for (int32_t t : end_tokens_) {
    const uint64_t bit = uint64_t{1} << (t & 63);
    mask[static_cast<size_t>(t) >> 6] = accepting ? mask[static_cast<size_t>(t) >> 6] | bit
                                                  : mask[static_cast<size_t>(t) >> 6] & ~bit;
  }
}

uint8_t GrammarMatcher::looping_classes(int32_t state) {
  if (static_cast<size_t>(state) >= looping_classes_.size())
    looping_classes_.resize(state + 1, kUnknownClasses);
  uint8_t& entry = looping_classes_[state];
  if (entry == kUnknownClasses) {
    std::array<uint64_t, 2> loops{0, 0};
    for (int b = 0; b < 128; ++b)
      if (automaton_.next(state, b) == state) loops[b >> 6] |= uint64_t{1} << (b & 63);
    const auto& classes = TokenTrie::text_classes();
    entry = 0;
    for (size_t k = 0; k < classes.size(); ++k)
      if ((classes[k][0] & ~loops[0]) == 0 && (classes[k][1] & ~loops[1]) == 0) entry |= 1 << k;
  }
  return entry;
}

const TokenBitmask& GrammarMatcher::allowed_tokens() {
  if (finished_) return none_;
  auto it = mask_cache_.find(state_);
  if (it != mask_cache_.end()) return it->second;
  if (automaton_.state_count() > kMaxStates) {
    state_ = automaton_.reset_keeping(state_);
    mask_cache_.clear();
    looping_classes_.clear();
  }
  if (mask_cache_.size() >= kMaxCachedMasks) mask_cache_.clear();
  TokenBitmask& mask = mask_cache_[state_];
  compute_mask(state_, mask);
  return mask;
}

bool GrammarMatcher::accept_token(int32_t token) {
  if (finished_ || token < 0 || token >= vocab_->vocab_size()) return false;
  if (std::find(end_tokens_.begin(), end_tokens_.end(), token) != end_tokens_.end()) {
    if (!automaton_.accepting(state_)) return false;
    finished_ = true;
    return true;
  }
  for (size_t m = 0; m < marker_tokens_.size(); ++m)
    if (marker_tokens_[m] == token) {
      const int32_t next = automaton_.next(state_, marker_symbol(static_cast<int>(m)));
      if (next == GrammarAutomaton::kDead) return false;
      state_ = next;
      return true;
    }
  const std::string_view bytes = vocab_->token_bytes(token);
  if (bytes.empty()) return false;  // a special token the grammar does not name
  return accept_bytes(bytes);
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  if (finished_) return false;
  int32_t state = state_;
  for (char c : bytes) {
    state = automaton_.next(state, static_cast<uint8_t>(c));
    if (state == GrammarAutomaton::kDead) return false;
  }
  state_ = state;
  return true;
}

}  // namespace minimax
