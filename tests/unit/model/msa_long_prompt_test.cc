// M3 with the real MSA block geometry (blocks of 128 tokens, top-16 blocks, local block forced,
// 4 index heads, spec/model.md §1.2, §5.3) on a prompt longer than 16 · 128 = 2048 tokens: the
// engine against the golden of tools/reference/make_msa_long_golden.py, and proof that the block
// choice changes the result past position 2048 (below it MSA is exactly dense attention).
//
// The checkpoint is the tiny M3 with only the attention geometry changed (4 KV heads so that
// 4 index heads are allowed; sparse_block_size 128, sparse_topk_blocks 16), written here from the
// golden's seed; the golden records the shard hash, so a changed generator is detected.
//
// Tolerance as in golden_test.cc: |engine − golden| ≤ 2e-4 and top-1 identical.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/error.h"
#include "checkpoint/model_config.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::fnv1a64_of_shards;
using testing_support::iota_positions;
using testing_support::msa_release_geometry_config_json;
using testing_support::scratch_path;

using testing_support::kLogitTolerance;
using testing_support::kSelectionMatters;

void write_msa_long_checkpoint(const std::string& dir, uint64_t seed, int vocab_size) {
  std::filesystem::create_directories(dir);
  const ModelConfig config =
      parse_model_config(msa_release_geometry_config_json(vocab_size), "msa long-prompt config");
  write_tiny_weights(config, dir, seed);
}

nlohmann::json load_msa_golden() {
  return testing_support::load_golden("msa-long/m3-bf16-block128");
}

int64_t argmax(const float* row, int64_t n) { return std::max_element(row, row + n) - row; }

// One checkpoint and one sparse all-token forward shared by the tests (the forward is the slow
// part).
class MsaLongPromptTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      prepare();
    } catch (const std::exception& e) {
      setup_error_ = new std::string(e.what());
    }
  }
  // Errors in the shared setup (missing golden, hash mismatch) fail every test with their text.
  void SetUp() override {
    if (setup_error_) GTEST_FAIL() << *setup_error_;
  }
  static void prepare() {
    golden_ = new nlohmann::json(load_msa_golden());
    dir_ = new std::string(scratch_path("msa_long"));
    write_msa_long_checkpoint(*dir_, golden_->at("seed").get<uint64_t>(),
                              golden_->at("vocab_size").get<int>());
    const std::string hash = fnv1a64_of_shards(*dir_);
    if (hash != golden_->at("checkpoint_fnv1a64").get<std::string>())
      fail(
          "golden msa-long/m3-bf16-block128: the checkpoint hashes to {}, the golden was made "
          "from {} (rerun tools/reference/make_msa_long_golden.py)",
          hash, golden_->at("checkpoint_fnv1a64").get<std::string>());
    tokens_ = new std::vector<int32_t>(golden_->at("tokens").get<std::vector<int32_t>>());
    sparse_logits_ = new std::vector<float>(forward_all(ModelOptions{}));
  }
  static void TearDownTestSuite() {
    delete golden_;
    delete dir_;
    delete tokens_;
    delete sparse_logits_;
    delete setup_error_;
  }

  static std::vector<float> forward_all(ModelOptions options) {
    options.backend = BackendKind::kCpu;
    options.threads = 2;
    auto model = Model::load(*dir_, options);
    KvCache cache = model->new_cache(static_cast<int64_t>(tokens_->size()), KvDtype::kF32);
    return model->forward(*tokens_, iota_positions(tokens_->size()), cache, LogitsFor::kAllTokens);
  }
  static int64_t vocab() { return golden_->at("vocab_size").get<int64_t>(); }
  static const float* row(const std::vector<float>& logits, int64_t pos) {
    return logits.data() + pos * vocab();
  }

  static inline nlohmann::json* golden_ = nullptr;
  static inline std::string* dir_ = nullptr;
  static inline std::vector<int32_t>* tokens_ = nullptr;
  static inline std::vector<float>* sparse_logits_ = nullptr;
  static inline std::string* setup_error_ = nullptr;
};

TEST_F(MsaLongPromptTest, UsesTheRealBlockGeometryAndALongerPrompt) {
  const ModelConfig config =
      parse_model_config(msa_release_geometry_config_json(64), "msa long-prompt config");
  EXPECT_EQ(config.sparse.block_size, 128);
  EXPECT_EQ(config.sparse.topk_blocks, 16);
  EXPECT_EQ(config.sparse.num_index_heads, 4);
  EXPECT_EQ(config.sparse.local_blocks, 1);
  EXPECT_EQ(config.sparse.init_blocks, 0);
  EXPECT_EQ(config.sparse.score_type, "max");
  EXPECT_EQ(golden_->at("dense_below").get<int64_t>(), 16 * 128);
  // From position 17 · 128 = 2176 on, 18 blocks are visible and two are left out.
  EXPECT_GT(tokens_->size(), 17u * 128u);
  int past = 0;
  for (const auto& check : golden_->at("checked"))
    past += check.at("position").get<int64_t>() >= 2048;
  EXPECT_GE(past, 3);
}

TEST_F(MsaLongPromptTest, MatchesReferenceGolden) {
  const int64_t n = vocab();
  ASSERT_EQ(sparse_logits_->size(), tokens_->size() * n);
  double worst = 0;
  for (const auto& check : golden_->at("checked")) {
    const int64_t pos = check.at("position").get<int64_t>();
    const float* r = row(*sparse_logits_, pos);
    const auto ids = check.at("top_ids").get<std::vector<int64_t>>();
    EXPECT_EQ(argmax(r, n), ids[0]) << "top-1 at position " << pos;
    for (size_t k = 0; k < ids.size(); ++k) {
      const double diff = std::fabs(r[ids[k]] - check.at("top_logits")[k].get<double>());
      worst = std::max(worst, diff);
      EXPECT_LE(diff, kLogitTolerance) << "position " << pos << " token " << ids[k];
    }
  }
  const float* last = row(*sparse_logits_, static_cast<int64_t>(tokens_->size()) - 1);
  const auto& golden_last = golden_->at("last_logits");
  ASSERT_EQ(static_cast<int64_t>(golden_last.size()), n);
  int64_t golden_top = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double diff = std::fabs(last[i] - golden_last[i].get<double>());
    worst = std::max(worst, diff);
    EXPECT_LE(diff, kLogitTolerance) << "last position, token " << i;
    if (golden_last[i].get<double>() > golden_last[golden_top].get<double>()) golden_top = i;
  }
  EXPECT_EQ(argmax(last, n), golden_top);
  std::printf("[ measured ] msa long prompt (%zu tokens): max |engine - golden| = %.3g\n",
              tokens_->size(), worst);
}

TEST_F(MsaLongPromptTest, DenseAttentionEqualsSparseBelow2048AndDiffersPastIt) {
  ModelOptions options;
  options.dense_attention = true;
  const std::vector<float> dense = forward_all(options);
  ASSERT_EQ(dense.size(), sparse_logits_->size());
  const int64_t n = vocab(), split = golden_->at("dense_below").get<int64_t>();
  double below = 0, past = 0;
  for (int64_t pos = 0; pos < static_cast<int64_t>(tokens_->size()); ++pos) {
    const float* s = row(*sparse_logits_, pos);
    const float* d = row(dense, pos);
    double& gap = pos < split ? below : past;
    for (int64_t i = 0; i < n; ++i) gap = std::max(gap, double(std::fabs(s[i] - d[i])));
  }
  EXPECT_EQ(below, 0.0) << "every block is selected below 16 · 128 tokens";
  EXPECT_GT(past, kSelectionMatters) << "past 2048 tokens the block choice must matter";
  // The dense diagnostic mode is the reference's dense attention.
  double dense_worst = 0;
  const float* last = row(dense, static_cast<int64_t>(tokens_->size()) - 1);
  for (int64_t i = 0; i < n; ++i)
    dense_worst = std::max(dense_worst,
                           std::fabs(last[i] - golden_->at("dense_last_logits")[i].get<double>()));
  EXPECT_LE(dense_worst, kLogitTolerance);
  std::printf(
      "[ measured ] msa long prompt: max |sparse - dense| below 2048 = %.3g, past 2048 = %.3g; "
      "dense vs reference dense = %.3g\n",
      below, past, dense_worst);
}

// Not a test: writes the checkpoint for tools/reference/make_msa_long_golden.py into
// $MINIMAX_MSA_LONG_CHECKPOINT with the seed and vocabulary given in $MINIMAX_MSA_LONG_SEED and
// $MINIMAX_MSA_LONG_VOCAB, through the same C++ path the tests above use.
TEST(MsaLongPromptTool, DISABLED_WriteCheckpoint) {
  const char* dir = std::getenv("MINIMAX_MSA_LONG_CHECKPOINT");
  const char* seed = std::getenv("MINIMAX_MSA_LONG_SEED");
  const char* vocab = std::getenv("MINIMAX_MSA_LONG_VOCAB");
  ASSERT_TRUE(dir && seed && vocab)
      << "set MINIMAX_MSA_LONG_CHECKPOINT, MINIMAX_MSA_LONG_SEED and MINIMAX_MSA_LONG_VOCAB";
  ASSERT_FALSE(std::filesystem::exists(dir)) << dir << " already exists";
  write_msa_long_checkpoint(dir, std::stoull(seed), std::stoi(vocab));
}

}  // namespace
}  // namespace minimax
