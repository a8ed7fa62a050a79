// Prompt lookup and suffix drafting (runtime/spec/drafter.h).
#include "runtime/spec/drafter.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace minimax {
namespace {

// Earlier occurrences examined per proposal: the most recent ones, which is where a sequence that
// copies from its context is copying from; it bounds a proposal's cost in a long context.
constexpr int kCandidates = 64;

struct Candidate {
  int64_t length;                   // tokens matched before the continuation
  std::span<const int32_t> follow;  // what followed the match
};

struct Walk {
  std::vector<int32_t> draft;
  double score = 0;  // expected accepted tokens: the sum of the running probabilities
};

// Suffix decoding's walk: the most frequent next token among the candidates, while the product
// of those frequencies stays at or above `min_prob`.
Walk walk_most_frequent(std::vector<Candidate> alive, int max_tokens, double min_prob) {
  Walk walk;
  double prob = 1;
  std::unordered_map<int32_t, int> counts;
  for (size_t depth = 0; static_cast<int>(depth) < max_tokens; ++depth) {
    counts.clear();
    int total = 0, best_count = 0;
    int32_t best = 0;
    for (const Candidate& c : alive) {  // most recent first: ties go to the most recent
      if (c.follow.size() <= depth) continue;
      ++total;
      const int n = ++counts[c.follow[depth]];
      if (n > best_count) best_count = n, best = c.follow[depth];
    }
    if (total == 0) break;
    prob *= static_cast<double>(best_count) / total;
    if (prob < min_prob) break;
    walk.draft.push_back(best);
    walk.score += prob;
    std::erase_if(alive, [&](const Candidate& c) {
      return c.follow.size() <= depth || c.follow[depth] != best;
    });
  }
  return walk;
}

}  // namespace

RecentOutputs::RecentOutputs(int max_requests) : max_requests_(max_requests) {}

int64_t RecentOutputs::size() const {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(entries_.size());
}

const RecentOutputs::Entry* RecentOutputs::entry(int64_t id) const {
  if (entries_.empty() || id < entries_.front().id || id > entries_.back().id) return nullptr;
  return &entries_[static_cast<size_t>(id - entries_.front().id)];
}

void RecentOutputs::add(std::span<const int32_t> output) {
  if (max_requests_ <= 0 || static_cast<int64_t>(output.size()) < kKeyLength) return;
  std::lock_guard lock(mutex_);
  const auto n = static_cast<int64_t>(std::min<size_t>(output.size(), kMaxTokens));
  entries_.push_back(Entry{next_id_++, std::vector<int32_t>(output.begin(), output.begin() + n)});
  tokens_ += n;
  const Entry& added = entries_.back();
  for (int64_t e = kKeyLength; e < n; ++e)  // a run at the very end has no continuation
    ends_[TokenIndex::hash_run(std::span(added.tokens).subspan(e - kKeyLength, kKeyLength))]
        .emplace_back(added.id, e);
  while (static_cast<int>(entries_.size()) > max_requests_ || tokens_ > kMaxTokens) {
    tokens_ -= static_cast<int64_t>(entries_.front().tokens.size());
    entries_.pop_front();
  }
  // Keys of dropped outputs are pruned when looked up; a full sweep keeps the map bounded.
  if (ends_.size() > static_cast<size_t>(4 * kMaxTokens / kKeyLength)) {
    const int64_t oldest = entries_.front().id;
    for (auto it = ends_.begin(); it != ends_.end();) {
      std::erase_if(it->second, [&](const auto& p) { return p.first < oldest; });
      it = it->second.empty() ? ends_.erase(it) : std::next(it);
    }
  }
}

std::vector<RecentOutputs::Match> RecentOutputs::find(std::span<const int32_t> context,
                                                      int max_depth, int max_tokens,
                                                      int limit) const {
  std::vector<Match> out;
  if (static_cast<int64_t>(context.size()) < kKeyLength) return out;
  std::lock_guard lock(mutex_);
  auto it = ends_.find(TokenIndex::hash_run(context.last(kKeyLength)));
  if (it == ends_.end() || entries_.empty()) return out;
  std::vector<std::pair<int64_t, int64_t>>& ends = it->second;
  // Ends are appended in id order, so those of dropped outputs are a prefix: checking the front
  // keeps a hot key's lookup from scanning millions of live entries every step.
  const int64_t oldest = entries_.front().id;
  if (!ends.empty() && ends.front().first < oldest)
    ends.erase(ends.begin(), std::partition_point(ends.begin(), ends.end(),
                                                  [&](const auto& p) { return p.first < oldest; }));
  for (auto e = ends.rbegin(); e != ends.rend() && static_cast<int>(out.size()) < limit; ++e) {
    const Entry* source = entry(e->first);
    if (source == nullptr) continue;
    const std::span<const int32_t> tokens(source->tokens);
    const int64_t length =
        common_suffix(context, static_cast<int64_t>(context.size()), tokens, e->second, max_depth);
    if (length < kKeyLength) continue;  // a hash collision
    const auto end = std::min<int64_t>(static_cast<int64_t>(tokens.size()), e->second + max_tokens);
    out.push_back(Match{length, {tokens.begin() + e->second, tokens.begin() + end}});
  }
  return out;
}

Drafter::Drafter(const SpeculativeConfig& config, std::shared_ptr<RecentOutputs> recent,
                 std::shared_ptr<Eagle3Head> head, std::shared_ptr<TapStore> taps)
    : config_(config),
      recent_(std::move(recent)),
      index_(config.method == DraftMethod::kNgram ? config.prompt_lookup_min
                                                  : RecentOutputs::kKeyLength),
      head_(std::move(head)) {
  if (config.method == DraftMethod::kEagle3) {
    if (!head_) fail("speculative decoding: method eagle3 without a loaded head");
    eagle_ = std::make_unique<Eagle3Drafter>(*head_, std::move(taps));
  }
}

void Drafter::add_taps(int64_t first, int64_t count, std::span<const float> taps) {
  if (eagle_) eagle_->add_taps(first, count, taps);
}

std::vector<int32_t> Drafter::propose(std::span<const int32_t> tokens, int max_tokens) {
  max_tokens = std::min(max_tokens, config_.num_speculative_tokens);
  if (max_tokens <= 0) return {};
  if (eagle_) return eagle_->propose(tokens, max_tokens);
  index_.extend(tokens);
  return config_.method == DraftMethod::kNgram ? propose_ngram(tokens, max_tokens)
                                               : propose_suffix(tokens, max_tokens);
}

std::vector<std::vector<int32_t>> Drafter::propose_batch(
    std::span<Drafter* const> drafters, std::span<const std::span<const int32_t>> tokens,
    std::span<const int> max_tokens) {
  std::vector<std::vector<int32_t>> drafts(drafters.size());
  std::vector<int> max(drafters.size());
  // EAGLE-3 drafters grouped by head (a server has one); the others one by one.
  std::vector<size_t> eagle;
  for (size_t s = 0; s < drafters.size(); ++s) {
    max[s] = std::min(max_tokens[s], drafters[s]->config_.num_speculative_tokens);
    if (!drafters[s]->eagle_)
      drafts[s] = drafters[s]->propose(tokens[s], max[s]);
    else if (max[s] > 0)
      eagle.push_back(s);
  }
  while (!eagle.empty()) {
    const Eagle3Head* head = drafters[eagle[0]]->head_.get();
    std::vector<Eagle3Drafter*> group;
    std::vector<std::span<const int32_t>> group_tokens;
    std::vector<int> group_max;
    std::vector<size_t> rest, members;
    for (size_t s : eagle) {
      if (drafters[s]->head_.get() != head) {
        rest.push_back(s);
        continue;
      }
      members.push_back(s);
      group.push_back(drafters[s]->eagle_.get());
      group_tokens.push_back(tokens[s]);
      group_max.push_back(max[s]);
    }
    std::vector<std::vector<int32_t>> got =
        Eagle3Drafter::propose_batch(group, group_tokens, group_max);
    for (size_t i = 0; i < members.size(); ++i) drafts[members[i]] = std::move(got[i]);
    eagle.swap(rest);
  }
  return drafts;
}

std::vector<int32_t> Drafter::propose_ngram(std::span<const int32_t> tokens, int max_tokens) {
  const auto size = static_cast<int64_t>(tokens.size());
  int64_t best_end = -1, best_length = 0;
  for (int64_t end : index_.earlier_ends(tokens, kCandidates)) {
    const int64_t length = common_suffix(tokens, size, tokens, end, config_.prompt_lookup_max);
    if (length > best_length) best_length = length, best_end = end;  // ties: the most recent
    if (best_length == config_.prompt_lookup_max) break;
  }
  if (best_end < 0 || best_length < config_.prompt_lookup_min) return {};
  const int64_t stop = std::min(size, best_end + max_tokens);
  return {tokens.begin() + best_end, tokens.begin() + stop};
}

std::vector<int32_t> Drafter::propose_suffix(std::span<const int32_t> tokens, int max_tokens) {
  const auto size = static_cast<int64_t>(tokens.size());
  const int depth = config_.suffix_max_tree_depth;
  std::vector<Candidate> candidates;
  for (int64_t end : index_.earlier_ends(tokens, kCandidates)) {
    const auto stop = std::min(size, end + max_tokens);
    candidates.push_back(
        {common_suffix(tokens, size, tokens, end, depth), tokens.subspan(end, stop - end)});
  }
  std::vector<RecentOutputs::Match> recent;
  if (recent_) recent = recent_->find(tokens, depth, max_tokens, kCandidates);
  for (const RecentOutputs::Match& m : recent) candidates.push_back({m.length, m.continuation});
  // Every matched suffix length is a node of the suffix tree: the longest one is the most
  // specific context, a shorter one has seen more continuations. The walk with the most expected
  // accepted tokens wins (as Arctic's suffix decoding scores its candidates).
  std::vector<int64_t> lengths;
  for (const Candidate& c : candidates) lengths.push_back(c.length);
  std::sort(lengths.begin(), lengths.end(), std::greater<>());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  Walk best;
  for (int64_t length : lengths) {
    std::vector<Candidate> alive;
    for (const Candidate& c : candidates)
      if (c.length >= length) alive.push_back(c);
    const int limit = std::min<int>(
        max_tokens, std::max(1, static_cast<int>(config_.suffix_max_spec_factor * length)));
    Walk walk = walk_most_frequent(std::move(alive), limit, config_.suffix_min_token_prob);
    if (walk.score > best.score) best = std::move(walk);
  }
  return best.draft;
}

void Drafter::finish(std::span<const int32_t> output) {
  if (recent_) recent_->add(output);
}

}  // namespace minimax
