// One continuous-batching step: budget, admission and preemption (runtime/scheduler.h).
#include "runtime/scheduler.h"

#include <algorithm>

#include "base/error.h"

namespace minimax {

Scheduler::Scheduler(BlockManager& blocks, int64_t max_num_seqs, int64_t max_batched_tokens)
    : blocks_(blocks), max_num_seqs_(max_num_seqs), max_batched_tokens_(max_batched_tokens) {
  if (max_num_seqs <= 0) fail("max_num_seqs: must be > 0, got {}", max_num_seqs);
  if (max_batched_tokens <= 0) fail("max_batched_tokens: must be > 0, got {}", max_batched_tokens);
}

int64_t Scheduler::blocks_for(int64_t tokens) const {
  return (tokens + blocks_.block_size() - 1) / blocks_.block_size();
}

void Scheduler::add(SchedSequence* seq) {
  if (seq->tokens.empty()) fail("scheduler: sequence {} has no tokens", seq->id);
  if (seq->num_computed != 0 || !seq->blocks.empty())
    fail("scheduler: sequence {} is added with state", seq->id);
  waiting_.push_back(seq);
}

bool Scheduler::grow(SchedSequence* seq, int64_t tokens) {
  const int64_t need = blocks_for(tokens) - static_cast<int64_t>(seq->blocks.size());
  if (need > blocks_.num_free()) return false;
  for (int64_t i = 0; i < need; ++i) seq->blocks.push_back(*blocks_.allocate());
  return true;
}

void Scheduler::preempt(SchedSequence* seq, SchedulerStep& step) {
  running_.erase(std::find(running_.begin(), running_.end(), seq));
  blocks_.release_all(seq->blocks);
  seq->blocks.clear();
  seq->num_computed = 0;
  seq->num_hashed = 0;
  seq->last_hash = 0;
  seq->draft.clear();
  ++seq->preemptions;
  waiting_.push_front(seq);
  step.preempted.push_back(seq);
}

SchedulerStep Scheduler::schedule() {
  SchedulerStep step;
  int64_t budget = max_batched_tokens_;
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    SchedSequence* seq = running_[i];
    // A draft rides on a decode only, and only as far as the budget and the free blocks allow: it
    // never preempts anyone.
    if (seq->remaining() != 1) seq->draft.clear();
    const auto fits = std::max<int64_t>(budget - seq->remaining(), 0);
    if (static_cast<int64_t>(seq->draft.size()) > fits)
      seq->draft.resize(static_cast<size_t>(fits));
    if (!seq->draft.empty() &&
        !grow(seq, seq->num_computed + seq->remaining() + static_cast<int64_t>(seq->draft.size())))
      seq->draft.clear();
    const auto draft = static_cast<int64_t>(seq->draft.size());
    const int64_t count = std::min(seq->remaining() + draft, budget);
    bool preempted_self = false;
    while (!grow(seq, seq->num_computed + count)) {
      // The newest sequence gives up its blocks; it is never one already scheduled in this
      // step, as those precede `seq` in admission order.
      SchedSequence* victim = running_.back();
      preempt(victim, step);
      if (victim == seq) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) break;
    step.chunks.push_back({seq, seq->num_computed, count, draft});
    budget -= count;
    ++i;
  }

  // Admission stops at the first request that does not fit (first come, first served), and
  // not at all in a step that had to preempt (the pool is full).
  while (step.preempted.empty() && !waiting_.empty() &&
         static_cast<int64_t>(running_.size()) < max_num_seqs_ && budget > 0) {
    SchedSequence* seq = waiting_.front();
    // At least the last token is computed: its logits are what the step is for.
    const std::vector<int32_t> hits = seq->read_prefix_cache
                                          ? blocks_.match_prefix(seq->tokens, seq->remaining() - 1)
                                          : std::vector<int32_t>{};
    const int64_t computed = static_cast<int64_t>(hits.size()) * blocks_.block_size();
    const int64_t count = std::min(static_cast<int64_t>(seq->tokens.size()) - computed, budget);
    const int64_t fresh = blocks_for(computed + count) - static_cast<int64_t>(hits.size());
    if (fresh + blocks_.count_evictable(hits) > blocks_.num_free()) break;
    for (int32_t block : hits) blocks_.retain(block);
    seq->blocks = hits;
    seq->num_computed = computed;
    if (seq->cached_tokens < 0) seq->cached_tokens = computed;
    grow(seq, computed + count);
    waiting_.pop_front();
    running_.push_back(seq);
    step.admitted.push_back(seq);
    step.chunks.push_back({seq, computed, count});
    budget -= count;
  }
  for (const ScheduledChunk& chunk : step.chunks) step.num_tokens += chunk.count;
  return step;
}

void Scheduler::register_full_blocks(SchedSequence* seq) {
  const int64_t size = blocks_.block_size();
  const int64_t full = seq->num_computed / size;
  for (int64_t b = seq->num_hashed; b < full; ++b) {
    const auto tokens = std::span<const int32_t>(seq->tokens).subspan(b * size, size);
    const uint64_t hash = BlockManager::chain_hash(seq->last_hash, tokens);
    blocks_.register_full(seq->blocks[b], hash, seq->last_hash, tokens);
    seq->last_hash = hash;
  }
  seq->num_hashed = std::max(seq->num_hashed, full);
}

void Scheduler::commit(const SchedulerStep& step) {
  for (const ScheduledChunk& chunk : step.chunks) {
    if (chunk.seq->num_computed != chunk.begin)
      fail("scheduler: sequence {} committed out of order", chunk.seq->id);
    chunk.seq->num_computed += chunk.count - chunk.draft;
    if (blocks_.prefix_caching()) register_full_blocks(chunk.seq);
  }
}

void Scheduler::accept_draft(SchedSequence* seq, int64_t accepted) {
  const auto drafted = static_cast<int64_t>(seq->draft.size());
  if (accepted < 0 || accepted > drafted)
    fail("scheduler: sequence {} accepted {} of {} draft tokens", seq->id, accepted, drafted);
  seq->draft.clear();
  seq->num_computed += accepted;
  if (seq->num_computed > static_cast<int64_t>(seq->tokens.size()))
    fail("scheduler: sequence {} has {} computed of {} tokens", seq->id, seq->num_computed,
         seq->tokens.size());
  // Keep the blocks the sequence's tokens need (the last one is written next step).
  const int64_t keep = blocks_for(static_cast<int64_t>(seq->tokens.size()));
  while (static_cast<int64_t>(seq->blocks.size()) > keep) {
    blocks_.release(seq->blocks.back());
    seq->blocks.pop_back();
  }
  if (blocks_.prefix_caching()) register_full_blocks(seq);
}

void Scheduler::remove(SchedSequence* seq) {
  if (auto it = std::find(running_.begin(), running_.end(), seq); it != running_.end())
    running_.erase(it);
  if (auto it = std::find(waiting_.begin(), waiting_.end(), seq); it != waiting_.end())
    waiting_.erase(it);
  blocks_.release_all(seq->blocks);
  seq->blocks.clear();
  seq->num_computed = 0;
}

}  // namespace minimax
