// The continuous-batching policy of one engine step (vLLM V1's scheduler): every sequence is a
// list of tokens of which a prefix has been computed (its keys and values are in its blocks);
// a step gives each sequence a chunk of its uncomputed tokens. Running sequences come first (a
// decode is 1 token, a prompt continues in chunks) within the step's token budget; then
// waiting sequences are admitted first come, first served while there are sequence slots,
// budget and blocks. When a running sequence needs a block and none is free, the most recently
// admitted sequence is preempted: its blocks are freed and it goes back to the front of the
// waiting queue, to be recomputed from its tokens (prompt + what it generated).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "runtime/block_manager.h"

namespace minimax {

struct SchedSequence {
  int64_t id = 0;
  std::vector<int32_t> tokens;    // prompt, then the generated tokens as they are sampled
  int64_t num_computed = 0;       // tokens [0, num_computed) have their KV in `blocks`
  std::vector<int32_t> blocks;    // block table: slot s is in blocks[s / block_size]
  bool read_prefix_cache = true;  // off for requests that want logits of every prompt token
  // Prefix-cache hits of the first admission (-1 until then).
  int64_t cached_tokens = -1;
  int64_t preemptions = 0;
  // Full blocks already offered to the prefix cache, and the chain hash of the last one.
  int64_t num_hashed = 0;
  uint64_t last_hash = 0;
  // Draft tokens to verify after the last token (speculative decoding): they ride on a decode
  // chunk, their keys and values are written in its blocks, and only accept_draft() makes them
  // part of the sequence. The scheduler shortens or drops a draft that does not fit the step.
  std::vector<int32_t> draft;

  int64_t remaining() const { return static_cast<int64_t>(tokens.size()) - num_computed; }
};

// Tokens [begin, begin + count) of `seq` run in this step; the last `draft` of them are the
// sequence's draft tokens (count - draft of its own tokens).
struct ScheduledChunk {
  SchedSequence* seq = nullptr;
  int64_t begin = 0, count = 0, draft = 0;
  // The chunk reaches the last known token: its logits give the next token.
  bool samples() const { return begin + count - draft == static_cast<int64_t>(seq->tokens.size()); }
};

struct SchedulerStep {
  std::vector<ScheduledChunk> chunks;    // running sequences first, then the admitted ones
  std::vector<SchedSequence*> admitted;  // moved from waiting to running in this step
  std::vector<SchedSequence*> preempted;
  int64_t num_tokens = 0;
  bool empty() const { return chunks.empty(); }
};

class Scheduler {
 public:
  // `blocks` must outlive the scheduler.
  Scheduler(BlockManager& blocks, int64_t max_num_seqs, int64_t max_batched_tokens);

  // Appends `seq` (not empty, nothing computed, no blocks) to the waiting queue.
  void add(SchedSequence* seq);
  SchedulerStep schedule();
  // After the forward pass of `step`: the chunks' tokens are computed, and blocks that became
  // full are offered to the prefix cache. Call before appending sampled tokens. Draft tokens are
  // not counted as computed until accept_draft().
  void commit(const SchedulerStep& step);
  // After the verify of `seq`'s draft and the tokens it emitted were appended: the first
  // `accepted` draft tokens are computed; the blocks only rejected ones used are freed. Their
  // keys are never offered to the prefix cache.
  void accept_draft(SchedSequence* seq, int64_t accepted);
  // Drops `seq` from whichever queue holds it and frees its blocks (finish, cancel, timeout).
  void remove(SchedSequence* seq);

  const std::deque<SchedSequence*>& waiting() const { return waiting_; }
  const std::deque<SchedSequence*>& running() const { return running_; }
  BlockManager& blocks() { return blocks_; }
  int64_t blocks_for(int64_t tokens) const;

 private:
  void preempt(SchedSequence* seq, SchedulerStep& step);
  bool grow(SchedSequence* seq, int64_t tokens);  // blocks for `tokens` slots; false if none
  void register_full_blocks(SchedSequence* seq);

  BlockManager& blocks_;
  int64_t max_num_seqs_, max_batched_tokens_;
  std::deque<SchedSequence*> waiting_, running_;  // running_ in admission order
};

}  // namespace minimax
