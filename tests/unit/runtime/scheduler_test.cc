// Scheduler policy without a model: the token budget and chunked prefill, FIFO admission within
// the sequence and block limits, preemption of the newest sequence, prefix hits at admission.
#include "runtime/scheduler.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>

namespace minimax {
namespace {

std::unique_ptr<SchedSequence> make_seq(int64_t id, int n, int first_token = 0) {
  auto seq = std::make_unique<SchedSequence>();
  seq->id = id;
  seq->tokens.resize(n);
  std::iota(seq->tokens.begin(), seq->tokens.end(), first_token);
  return seq;
}

// What the engine does after a forward: commit, then a new token for every sampling chunk.
void run(Scheduler& s, const SchedulerStep& step) {
  s.commit(step);
  for (const ScheduledChunk& chunk : step.chunks)
    if (chunk.samples()) chunk.seq->tokens.push_back(1000 + chunk.seq->id);
}

TEST(Scheduler, ChunkedPrefillWithinTheBudgetThenDecode) {
  BlockManager blocks(64, 4, false);
  Scheduler s(blocks, 8, 10);
  auto a = make_seq(0, 25);
  s.add(a.get());
  SchedulerStep step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].begin, 0);
  EXPECT_EQ(step.chunks[0].count, 10);
  EXPECT_FALSE(step.chunks[0].samples());
  EXPECT_EQ(a->blocks.size(), 3u);  // blocks for 10 slots
  run(s, step);
  step = s.schedule();
  EXPECT_EQ(step.chunks[0].begin, 10);
  EXPECT_EQ(step.chunks[0].count, 10);
  run(s, step);
  step = s.schedule();
  EXPECT_EQ(step.chunks[0].begin, 20);
  EXPECT_EQ(step.chunks[0].count, 5);
  EXPECT_TRUE(step.chunks[0].samples());
  run(s, step);
  EXPECT_EQ(a->tokens.size(), 26u);
  step = s.schedule();  // decode: the sampled token
  EXPECT_EQ(step.chunks[0].begin, 25);
  EXPECT_EQ(step.chunks[0].count, 1);
  EXPECT_TRUE(step.chunks[0].samples());
  EXPECT_EQ(a->blocks.size(), 7u);
  s.remove(a.get());
  EXPECT_EQ(blocks.num_used(), 0);
}

TEST(Scheduler, RunningFirstThenWaitingFifoWithinBudgetAndSlots) {
  BlockManager blocks(64, 4, false);
  Scheduler s(blocks, 3, 12);
  auto a = make_seq(0, 5), b = make_seq(1, 9), c = make_seq(2, 3), d = make_seq(3, 2);
  s.add(a.get());
  s.add(b.get());
  s.add(c.get());
  s.add(d.get());
  SchedulerStep step = s.schedule();
  // a takes 5, b the remaining 7 of the budget; c must wait (no budget), d behind it.
  ASSERT_EQ(step.chunks.size(), 2u);
  EXPECT_EQ(step.chunks[0].seq, a.get());
  EXPECT_EQ(step.chunks[1].seq, b.get());
  EXPECT_EQ(step.chunks[1].count, 7);
  EXPECT_EQ(step.num_tokens, 12);
  EXPECT_EQ(s.running().size(), 2u);
  EXPECT_EQ(s.waiting().front(), c.get());
  run(s, step);
  step = s.schedule();
  // a decodes (1), b finishes its prompt (2), then c is admitted (3): 3 slots are full so d
  // waits although budget is left.
  ASSERT_EQ(step.chunks.size(), 3u);
  EXPECT_EQ(step.chunks[0].seq, a.get());
  EXPECT_EQ(step.chunks[0].count, 1);
  EXPECT_EQ(step.chunks[1].seq, b.get());
  EXPECT_EQ(step.chunks[1].count, 2);
  EXPECT_EQ(step.chunks[2].seq, c.get());
  EXPECT_EQ(step.admitted, std::vector<SchedSequence*>{c.get()});
  EXPECT_EQ(s.waiting().size(), 1u);
  run(s, step);
  s.remove(a.get());  // a finishes: d gets its slot
  step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 3u);
  EXPECT_EQ(step.chunks[2].seq, d.get());
  for (auto* seq : {b.get(), c.get(), d.get()}) s.remove(seq);
  EXPECT_EQ(blocks.num_used(), 0);
}

TEST(Scheduler, AdmissionWaitsForBlocksInOrder) {
  BlockManager blocks(4, 4, false);
  Scheduler s(blocks, 8, 100);
  auto a = make_seq(0, 10), b = make_seq(1, 8), c = make_seq(2, 2);
  s.add(a.get());
  s.add(b.get());
  s.add(c.get());
  SchedulerStep step = s.schedule();
  // a takes 3 blocks; b needs 2 and only 1 is free: b waits, and c (which would fit) waits
  // behind it.
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].seq, a.get());
  EXPECT_EQ(s.waiting().size(), 2u);
  s.remove(a.get());
  step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 2u);
  EXPECT_EQ(step.chunks[0].seq, b.get());
  EXPECT_EQ(step.chunks[1].seq, c.get());
}

TEST(Scheduler, PreemptsTheNewestAndRecomputesItFromItsTokens) {
  BlockManager blocks(4, 2, false);
  Scheduler s(blocks, 8, 100);
  auto a = make_seq(0, 3), b = make_seq(1, 3);
  s.add(a.get());
  s.add(b.get());
  SchedulerStep step = s.schedule();  // 2 blocks each: the pool is full
  ASSERT_EQ(step.chunks.size(), 2u);
  run(s, step);  // both now hold 4 tokens (3 computed): 2 blocks cover them
  step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 2u);  // slot 3 fits the second block of each
  run(s, step);
  // Now each has 5 tokens, 4 computed: slot 4 needs a third block, none is free. a runs first
  // and takes b's: b, the newest, is preempted.
  step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].seq, a.get());
  EXPECT_EQ(step.preempted, std::vector<SchedSequence*>{b.get()});
  EXPECT_TRUE(step.admitted.empty());  // no admission in a step that preempted
  EXPECT_EQ(b->num_computed, 0);
  EXPECT_TRUE(b->blocks.empty());
  EXPECT_EQ(b->preemptions, 1);
  EXPECT_EQ(b->tokens.size(), 5u);  // its generated tokens are kept for the recomputation
  EXPECT_EQ(s.waiting().front(), b.get());
  run(s, step);
  s.remove(a.get());
  step = s.schedule();  // b comes back and recomputes all 5 tokens in one chunk
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].seq, b.get());
  EXPECT_EQ(step.chunks[0].begin, 0);
  EXPECT_EQ(step.chunks[0].count, 5);
  EXPECT_TRUE(step.chunks[0].samples());
  s.remove(b.get());
  EXPECT_EQ(blocks.num_used(), 0);
}

TEST(Scheduler, PreemptionOrderIsNewestFirstAndTheyReturnOldestFirst) {
  BlockManager blocks(8, 2, false);
  Scheduler s(blocks, 8, 100);
  auto a = make_seq(0, 4), b = make_seq(1, 2), c = make_seq(2, 2);
  s.add(a.get());
  s.add(b.get());
  s.add(c.get());
  run(s, s.schedule());  // a: 2 blocks, b: 1, c: 1
  run(s, s.schedule());  // one more each: 7 held, 1 free
  EXPECT_EQ(blocks.num_free(), 1);
  // a gets a long stretch to compute (13 tokens, 5 computed): 7 blocks, 4 more than it holds.
  for (int i = 0; i < 7; ++i) a->tokens.push_back(7);
  SchedulerStep step = s.schedule();
  EXPECT_EQ(step.preempted, (std::vector<SchedSequence*>{c.get(), b.get()}));
  ASSERT_EQ(step.chunks.size(), 1u);
  EXPECT_EQ(step.chunks[0].seq, a.get());
  EXPECT_EQ(step.chunks[0].count, 8);
  ASSERT_EQ(s.waiting().size(), 2u);
  EXPECT_EQ(s.waiting()[0], b.get());  // the older one is first again
  EXPECT_EQ(s.waiting()[1], c.get());
  for (auto* seq : {a.get(), b.get(), c.get()}) s.remove(seq);
  EXPECT_EQ(blocks.num_used(), 0);
}

TEST(Scheduler, ALoneSequenceThatCannotGrowPreemptsItself) {
  BlockManager blocks(2, 2, false);
  Scheduler s(blocks, 8, 100);
  auto a = make_seq(0, 4);
  s.add(a.get());
  run(s, s.schedule());
  SchedulerStep step = s.schedule();  // slot 4 needs a third block: impossible
  EXPECT_TRUE(step.chunks.empty());
  EXPECT_EQ(step.preempted, std::vector<SchedSequence*>{a.get()});
  EXPECT_EQ(blocks.num_used(), 0);
  s.remove(a.get());
}

TEST(Scheduler, PrefixHitsAtAdmissionLeaveTheLastTokenToCompute) {
  BlockManager blocks(16, 4, true);
  Scheduler s(blocks, 8, 100);
  auto a = make_seq(0, 12);
  s.add(a.get());
  run(s, s.schedule());
  EXPECT_EQ(a->cached_tokens, 0);
  // Same 12 prompt tokens: the first 8 are taken from a's blocks (the third block would cover
  // the last token, which must be computed).
  auto b = make_seq(1, 12);
  s.add(b.get());
  SchedulerStep step = s.schedule();
  ASSERT_EQ(step.chunks.size(), 2u);
  EXPECT_EQ(step.chunks[1].seq, b.get());
  EXPECT_EQ(step.chunks[1].begin, 8);
  EXPECT_EQ(step.chunks[1].count, 4);
  EXPECT_EQ(b->cached_tokens, 8);
  EXPECT_EQ(b->blocks[0], a->blocks[0]);
  EXPECT_EQ(b->blocks[1], a->blocks[1]);
  EXPECT_NE(b->blocks[2], a->blocks[2]);
  EXPECT_EQ(blocks.ref_count(a->blocks[0]), 2);
  // A sequence that reads no prefix cache computes everything.
  auto c = make_seq(2, 12);
  c->read_prefix_cache = false;
  s.add(c.get());
  step = s.schedule();
  EXPECT_EQ(step.chunks.back().seq, c.get());
  EXPECT_EQ(step.chunks.back().begin, 0);
  for (auto* seq : {a.get(), b.get(), c.get()}) s.remove(seq);
  EXPECT_EQ(blocks.num_used(), 0);
}

}  // namespace
}  // namespace minimax
