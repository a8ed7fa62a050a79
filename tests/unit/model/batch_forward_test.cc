// Model::forward_batch: a sequence's logits (and the keys and values it leaves behind) are the same
// bits whether it runs alone or in a batch with others, for every tiny-model weight format, both
// MoE paths and both backends, on a batch of one prefill chunk and two single-token decodes of
// different lengths; logits come back in batch order; errors name the batch index and change no
// cache.
#include <gtest/gtest.h>

#include <cctype>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

constexpr int kBatchVocab = 576;

std::vector<int32_t> batch_prompt(size_t n, int salt) {
  return testing_support::prompt_tokens(n, kBatchVocab, salt);
}

using testing_support::token_range;

bool same_bits(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

struct BatchCase {
  Arch arch;
  QuantScheme scheme;
  MoePath moe_path;
  BackendKind backend;
};

std::string batch_case_name(const BatchCase& c) {
  std::string name = std::string(arch_name(c.arch)) + "_" +
                     std::string(quant_scheme_name(c.scheme)) + "_" +
                     std::string(moe_path_name(c.moe_path)) + "_" +
                     (c.backend == BackendKind::kCpu ? "cpu" : "ref");
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

std::vector<BatchCase> batch_cases() {
  std::vector<BatchCase> out;
  for (Arch arch : {Arch::kM2, Arch::kM3})
    for (QuantScheme scheme : {QuantScheme::kNone, QuantScheme::kFp8Block, QuantScheme::kFp8Channel,
                               QuantScheme::kMxfp4, QuantScheme::kNvfp4})
      for (MoePath path : {MoePath::kFast, MoePath::kDequant})
        out.push_back({arch, scheme, path, BackendKind::kCpu});
  out.push_back({Arch::kM2, QuantScheme::kFp8Block, MoePath::kFast, BackendKind::kReference});
  out.push_back({Arch::kM3, QuantScheme::kNvfp4, MoePath::kDequant, BackendKind::kReference});
  return out;
}

class BatchInvariance : public ::testing::TestWithParam<BatchCase> {};

TEST_P(BatchInvariance, EachSequenceGetsTheBitsItGetsAlone) {
  const BatchCase& c = GetParam();
  ModelOptions options;
  options.backend = c.backend;
  options.moe_path = c.moe_path;
  options.threads = 2;
  auto model =
      Model::load(testing_support::tiny_checkpoint(c.arch, c.scheme, 3, kBatchVocab), options);
  const int64_t vocab = model->config().vocab_size;
  // Histories of 5, 20 and 33 tokens; the step: 7 more tokens of sequence 0 (a prefill chunk,
  // every row's logits) and one decode token each for sequences 1 and 2.
  const std::vector<int32_t> history[3] = {batch_prompt(5, 3), batch_prompt(20, 50),
                                           batch_prompt(33, 91)};
  const std::vector<int32_t> step_tokens[3] = {batch_prompt(7, 400), {17}, {401}};
  const std::vector<int32_t> step_positions[3] = {token_range(5, 12), {20}, {33}};
  const LogitsFor which[3] = {LogitsFor::kAllTokens, LogitsFor::kLastToken, LogitsFor::kLastToken};
  const int64_t rows[3] = {7, 1, 1};

  // Alone: contiguous caches, one forward per sequence, then one decode each.
  std::vector<KvCache> alone;
  std::vector<float> alone_step[3], alone_next[3];
  for (int i = 0; i < 3; ++i) {
    alone.push_back(model->new_cache(40));
    const auto positions = token_range(0, static_cast<int32_t>(history[i].size()));
    model->forward(history[i], positions, alone[i]);
    alone_step[i] = model->forward(step_tokens[i], step_positions[i], alone[i], which[i]);
    const int32_t next = 9, at = step_positions[i].back() + 1;
    alone_next[i] = model->forward({&next, 1}, {&at, 1}, alone[i]);
  }

  // Batched: paged caches in one pool (histories still run alone), the step and the next decode
  // as batches of three.
  auto pool_owner = model->new_kv_pool(9, 16);
  KvBlockPool& pool = *pool_owner;
  std::vector<KvCache> paged;
  paged.emplace_back(pool, std::vector<int32_t>{4});
  paged.emplace_back(pool, std::vector<int32_t>{0, 7});
  paged.emplace_back(pool, std::vector<int32_t>{8, 2, 5});
  for (int i = 0; i < 3; ++i)
    model->forward(history[i], token_range(0, static_cast<int32_t>(history[i].size())), paged[i]);
  std::vector<BatchSequence> batch(3);
  for (int i = 0; i < 3; ++i) batch[i] = {step_tokens[i], step_positions[i], &paged[i], which[i]};
  const auto step = model->forward_batch(batch);
  ASSERT_EQ(step.size(), static_cast<size_t>((rows[0] + rows[1] + rows[2]) * vocab));
  int64_t row = 0;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(alone_step[i].size(), static_cast<size_t>(rows[i] * vocab));
    EXPECT_TRUE(same_bits(step.data() + row * vocab, alone_step[i].data(), rows[i] * vocab))
        << batch_case_name(c) << ": step logits of sequence " << i;
    row += rows[i];
  }
  // The keys and values the batch wrote are the ones each sequence writes alone.
  const int32_t next = 9;
  const int32_t at[3] = {12, 21, 34};
  for (int i = 0; i < 3; ++i) batch[i] = {{&next, 1}, {&at[i], 1}, &paged[i]};
  const auto decode = model->forward_batch(batch);
  ASSERT_EQ(decode.size(), static_cast<size_t>(3 * vocab));
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(same_bits(decode.data() + i * vocab, alone_next[i].data(), vocab))
        << batch_case_name(c) << ": next decode of sequence " << i;
}

INSTANTIATE_TEST_SUITE_P(TinyModels, BatchInvariance, ::testing::ValuesIn(batch_cases()),
                         [](const auto& info) { return batch_case_name(info.param); });

using testing_support::expect_error_mentions;

TEST(ForwardBatch, ErrorsNameTheBatchIndexAndChangeNoCache) {
  ModelOptions options;
  options.backend = BackendKind::kReference;
  auto model = Model::load(
      testing_support::tiny_checkpoint(Arch::kM2, QuantScheme::kNone, 3, kBatchVocab), options);
  KvCache first = model->new_cache(8), second = model->new_cache(8);
  const std::vector<int32_t> two = {1, 2}, one = {3}, at01 = {0, 1}, at0 = {0};
  auto batch_of = [&](BatchSequence s1) {
    return std::vector<BatchSequence>{{two, at01, &first}, s1};
  };
  const std::vector<int32_t> at08 = {0, 8}, at05 = {0, 5}, big = {100000, 1}, none;
  const std::pair<BatchSequence, std::string> bad[] = {
      {{two, at08, &second}, "forward_batch: sequence 1: KV cache: position 8 is outside"},
      {{two, at05, &second}, "forward_batch: sequence 1: token 1 at position 5"},
      {{two, at0, &second}, "forward_batch: sequence 1: 2 tokens but 1 positions"},
      {{none, none, &second}, "forward_batch: sequence 1: no tokens"},
      {{big, at01, &second}, "forward_batch: sequence 1: token id 100000"},
      {{one, at0, nullptr}, "forward_batch: sequence 1: no KV cache"},
      {{one, at0, &first}, "forward_batch: sequence 1: same KV cache as sequence 0"},
  };
  for (const auto& [sequence, message] : bad) {
    expect_error_mentions([&] { model->forward_batch(batch_of(sequence)); }, message);
    EXPECT_EQ(first.length(), 0) << message;  // checked before sequence 0's cache changed
    EXPECT_EQ(second.length(), 0) << message;
  }
  expect_error_mentions([&] { model->forward_batch({}); }, "empty batch");
  // The good batch runs, with logits in batch order: sequence 0's two rows, then sequence 1's one.
  const std::vector<BatchSequence> good = {{two, at01, &first, LogitsFor::kAllTokens},
                                           {one, at0, &second}};
  const auto logits = model->forward_batch(good);
  EXPECT_EQ(logits.size(), static_cast<size_t>(3 * model->config().vocab_size));
  EXPECT_EQ(first.length(), 2);
  EXPECT_EQ(second.length(), 1);
  KvCache solo = model->new_cache(8);
  const auto alone = model->forward(one, at0, solo);
  EXPECT_TRUE(
      same_bits(logits.data() + 2 * model->config().vocab_size, alone.data(), alone.size()));
}

}  // namespace
}  // namespace minimax
