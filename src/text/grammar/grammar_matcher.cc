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
  walk_chars_.resize(vocab_->max_depth() + 1);
}

void GrammarMatcher::compute_mask(int32_t state, TokenBitmask& mask, Clock::time_point deadline) {
  mask.assign(none_.size(), 0);
  const TokenTrie& trie = *vocab_;
  walk_[0] = state;
  walk_chars_[0] = 0;
  const size_t n = trie.node_count();
  auto allow = [&mask](int32_t t) { mask[static_cast<size_t>(t) >> 6] |= uint64_t{1} << (t & 63); };
  // The text classes whose run from the last state asked can spare a visit: most nodes share a
  // state.
  int32_t useful_of = -1;
  uint8_t useful = 0;
  // The clock is read every kCheckEvery nodes visited and after each new automaton state: a node
  // costs nanoseconds when its state's successors are known; a new state is what can be slow.
  constexpr uint32_t kCheckEvery = 1024;
  const bool timed = deadline != Clock::time_point::max();
  uint32_t visits = 0;
  size_t states_seen = automaton_.state_count();
  for (size_t i = 0; i < n;) {
    if (timed && (++visits % kCheckEvery == 0 || automaton_.state_count() != states_seen)) {
      states_seen = automaton_.state_count();
      if (Clock::now() > deadline)
        throw GrammarWorkExceeded("grammar: a token mask ran past its time budget");
    }
    const uint16_t depth = trie.depth(i);
    const int32_t from = walk_[depth - 1];
    // (Asked for every state, so that the test below is almost always false where no run can
    // help, without a branch on the node's own classes.)
    if (from != useful_of) {
      useful_of = from;
      useful = static_cast<size_t>(from) < useful_.size() && useful_[from] != kUsefulUnknown
                   ? static_cast<uint8_t>(useful_[from])
                   : useful_classes(from);
    }
    if (const uint8_t classes = trie.subtree_classes(i) & useful;
        classes != 0 && take_text_subtree(i, from, classes, mask)) {
      i = trie.subtree_end(i);
      continue;
    }
    const int32_t next = automaton_.next(from, trie.byte(i));
    if (next == GrammarAutomaton::kDead) {
      i = trie.subtree_end(i);  // no token through this prefix
      continue;
    }
    walk_[depth] = next;
    walk_chars_[depth] = walk_chars_[depth - 1] + TokenTrie::is_char_start(trie.byte(i));
    for (auto [t, end] = trie.node_tokens(i); t != end; ++t) allow(*t);
    ++i;
  }
  for (size_t m = 0; m < marker_tokens_.size(); ++m)
    if (automaton_.next(state, marker_symbol(static_cast<int>(m))) != GrammarAutomaton::kDead)
      allow(marker_tokens_[m]);
  // An end token ends the request whatever its bytes (the engine stops at it), so it is allowed
  // exactly where the sentence is complete, even when it is also an ordinary token.
  const bool accepting = automaton_.accepting(state);
  for (int32_t t : end_tokens_) {
    const uint64_t bit = uint64_t{1} << (t & 63);
    mask[static_cast<size_t>(t) >> 6] = accepting ? mask[static_cast<size_t>(t) >> 6] | bit
                                                  : mask[static_cast<size_t>(t) >> 6] & ~bit;
  }
}

bool GrammarMatcher::take_text_subtree(size_t i, int32_t from, uint8_t classes,
                                       TokenBitmask& mask) {
  // Every token of the subtree is text of each class in `classes`: a class whose run covers the
  // subtree's characters allows all its tokens; an exact run shorter than that allows those with
  // no more characters than it. Either way the subtree's nodes need no visit.
  const TokenTrie& trie = *vocab_;
  const std::array<uint16_t, kClasses>& runs = class_steps_[from].run;
  const int height = trie.subtree_chars(i);
  int exact = -1;
  bool all = false;
  for (int k = 0; k < kClasses && !all; ++k) {
    if (!((classes >> k) & 1)) continue;
    const int run = runs[k] & ~kRunExact;
    all = runs[k] == kRunEndless || (height < 255 && height <= run);
    if (runs[k] & kRunExact) exact = run;
  }
  if (!all && exact < 0) return false;
  auto [t, end] = trie.subtree_tokens(i);
  if (all) {
    for (; t != end; ++t) mask[static_cast<size_t>(*t) >> 6] |= uint64_t{1} << (*t & 63);
    return true;
  }
  // A token's characters from node i on: its own less those above node i.
  const int limit = exact + walk_chars_[trie.depth(i) - 1];
  const uint16_t* chars = trie.subtree_token_chars(i);
  for (; t != end; ++t, ++chars)
    if (*chars <= limit) mask[static_cast<size_t>(*t) >> 6] |= uint64_t{1} << (*t & 63);
  return true;
}

GrammarMatcher::ClassSteps& GrammarMatcher::class_steps(int32_t state) {
  if (class_steps_.size() <= static_cast<size_t>(state)) class_steps_.resize(state + 1);
  if (!class_steps_[state].known) {
    // automaton_.next may add states, but never touches class_steps_.
    std::array<int32_t, 128> next;
    for (int b = 0; b < 128; ++b) next[b] = automaton_.next(state, b);
    const int32_t multibyte = automaton_.multibyte_successor(state);
    ClassSteps& steps = class_steps_[state];
    const auto& classes = TokenTrie::text_classes();
    for (int k = 0; k < TokenTrie::kAsciiClasses; ++k) {
      constexpr int32_t kNone = -4;
      int32_t shared = kNone;
      for (int b = 0; b < 128 && shared != GrammarAutomaton::kMixed; ++b)
        if ((classes[k][b >> 6] >> (b & 63)) & 1)
          shared = shared == kNone || shared == next[b] ? next[b] : GrammarAutomaton::kMixed;
      steps.next[k] = shared == kNone ? GrammarAutomaton::kMixed : shared;
      // The same class with every multi-byte character: they must lead where its ASCII does.
      steps.next[TokenTrie::kAsciiClasses + k] =
          multibyte == steps.next[k] ? steps.next[k] : GrammarAutomaton::kMixed;
    }
    steps.run.fill(kRunUnknown);
    steps.known = true;
  }
  return class_steps_[state];
}

// Out of line: the walk calls it once per state; inlined, it crowded the walk's loop.
__attribute__((noinline)) uint8_t GrammarMatcher::useful_classes(int32_t state) {
  if (useful_.size() <= static_cast<size_t>(state)) useful_.resize(state + 1, kUsefulUnknown);
  if (useful_[state] == kUsefulUnknown) {
    uint8_t useful = 0;
    for (int k = 0; k < kClasses; ++k)
      if (class_run(state, k) != 0) useful |= 1 << k;
    useful_[state] = useful;  // class_run does not touch useful_
  }
  return static_cast<uint8_t>(useful_[state]);
}

uint16_t GrammarMatcher::class_run(int32_t state, int k) {
  // Follow the states class k leads through until one whose run is known: it loops (endless),
  // leads nowhere (0, exact), splits (0: no promise), or the horizon is reached (a lower bound;
  // subtrees deeper than that are walked). Each state before it adds one character.
  chain_.clear();
  int32_t s = state;
  uint16_t run = 0;
  for (;;) {
    ClassSteps& steps = class_steps(s);
    if (steps.run[k] != kRunUnknown) {
      run = steps.run[k];
      break;
    }
    const int32_t next = steps.next[k];
    if (next == GrammarAutomaton::kMixed || next == GrammarAutomaton::kDead || next == s) {
      run = next == GrammarAutomaton::kMixed ? 0 : next == s ? kRunEndless : kRunExact;
      steps.run[k] = run;
      break;
    }
    if (chain_.size() == kRunHorizon) {
      // Only the state asked learns its lower bound; the ones after it may see further later.
      class_steps(state).run[k] = kRunHorizon;
      return kRunHorizon;
    }
    chain_.push_back(s);
    s = next;
  }
  for (size_t j = chain_.size(); j-- > 0;) {
    if (run != kRunEndless && (run & ~kRunExact) + 1 < kRunEndless)
      run = static_cast<uint16_t>((run & kRunExact) | ((run & ~kRunExact) + 1));
    class_steps(chain_[j]).run[k] = run;
  }
  return run;
}

const TokenBitmask& GrammarMatcher::allowed_tokens(Clock::time_point deadline) {
  if (finished_) return none_;
  auto it = mask_cache_.find(state_);
  if (it != mask_cache_.end()) return it->second;
  if (automaton_.state_count() > kMaxStates) {
    state_ = automaton_.reset_keeping(state_);
    mask_cache_.clear();
    class_steps_.clear();
    useful_.clear();
  }
  if (mask_cache_.size() >= kMaxCachedMasks) mask_cache_.clear();
  TokenBitmask& mask = mask_cache_[state_];
  try {
    compute_mask(state_, mask, deadline);
  } catch (...) {
    mask_cache_.erase(state_);  // not a mask of the state
    throw;
  }
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

size_t GrammarMatcher::allowed_prefix(std::span<const int32_t> tokens) {
  const int32_t state = state_;
  const bool finished = finished_;
  size_t allowed = 0;
  try {
    while (allowed < tokens.size() && accept_token(tokens[allowed])) ++allowed;
  } catch (const Error&) {
    // Past the automaton's limits: the draft ends here, and sampling meets the same error.
  }
  // States only grow between masks (reset_keeping runs in allowed_tokens), so `state` is valid.
  state_ = state;
  finished_ = finished;
  return allowed;
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
