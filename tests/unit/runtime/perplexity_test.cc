// run_perplexity on a tiny M3 checkpoint: the windows a text is cut into, a run compared with its
// own base (KL 0, top-1 1), the same scores however the scored half is split into calls, a base of
// another text refused, and BOS from tokenizer_config.json.
#include "runtime/perplexity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "runtime_fixture.h"
#include "scratch_dir.h"

namespace minimax {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<int32_t> window_text(int n, int salt = 0) {
  std::vector<int32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back((i * 37 + 11 + salt * 5) % 250);
  return ids;
}

std::unique_ptr<Model> load_tiny_m3() {
  ModelOptions o;
  o.threads = 1;
  return Model::load(runtime_test::tiny_model_dir(Arch::kM3), o);
}

TEST(PerplexityTest, WindowsAreWholeAndScoreTheirSecondHalf) {
  const PerplexityWindows w = plan_perplexity_windows(1100, 512);
  EXPECT_EQ(w.windows, 2);
  EXPECT_EQ(w.first, 256);
  EXPECT_EQ(w.scored_per_window, 255);
  EXPECT_EQ(w.positions(), 510);
  EXPECT_EQ(plan_perplexity_windows(5, 5).scored_per_window, 2);  // positions 2 and 3
  EXPECT_THAT([] { plan_perplexity_windows(300, 512); },
              ::testing::ThrowsMessage<Error>(AllOf(HasSubstr("300 tokens"), HasSubstr("512"))));
  EXPECT_THROW(plan_perplexity_windows(100, 3), Error);
}

TEST(PerplexityTest, ARunComparedWithItsOwnBaseAgreesExactly) {
  auto model = load_tiny_m3();
  const std::vector<int32_t> text = window_text(3 * 16 + 5);  // three windows and a remainder
  PerplexityOptions options;
  options.context = 16;
  const PerplexityWindows w = plan_perplexity_windows(static_cast<int64_t>(text.size()), 16);
  ScratchDir dir;
  const std::string path = dir.file("base.kl");

  KlBaseWriter writer(path, perplexity_base_header(w, text, model->weights().vocab_size, 8));
  int64_t windows_seen = 0;
  const PerplexityResult written = run_perplexity(*model, text, options, &writer, nullptr,
                                                  [&](int64_t done) { windows_seen = done; });
  writer.commit();
  EXPECT_EQ(windows_seen, 3);
  EXPECT_EQ(written.nll.count(), 3 * 7);
  EXPECT_FALSE(written.comparison);
  EXPECT_GT(perplexity_of(written.nll).value, 1.0);

  // Compared with its own base, one row of logits per call: the logits of a position do not
  // depend on how its window is split, so nothing moves.
  const KlBaseReader base(path);
  EXPECT_EQ(base.header().positions, 21u);
  PerplexityOptions split = options;
  split.max_logits_bytes = 1;
  const PerplexityResult compared = run_perplexity(*model, text, split, nullptr, &base);
  ASSERT_TRUE(compared.comparison);
  const KlComparison& c = *compared.comparison;
  EXPECT_EQ(c.count(), 21);
  EXPECT_EQ(c.kl().mean(), 0.0);
  EXPECT_EQ(c.kl_percentile(0.99), 0.0);
  EXPECT_EQ(c.top1().mean(), 1.0);
  EXPECT_EQ(c.max_abs_dlogprob(), 0.0);
  EXPECT_EQ(compared.nll.mean(), written.nll.mean());
  EXPECT_EQ(c.base_nll().mean(), written.nll.mean());
}

TEST(PerplexityTest, ABaseOfAnotherTextOrWindowIsRefused) {
  auto model = load_tiny_m3();
  const std::vector<int32_t> text = window_text(40);
  PerplexityOptions options;
  options.context = 16;
  const PerplexityWindows w = plan_perplexity_windows(40, 16);
  ScratchDir dir;
  const std::string path = dir.file("base.kl");
  KlBaseWriter writer(path, perplexity_base_header(w, text, model->weights().vocab_size, 4));
  run_perplexity(*model, text, options, &writer, nullptr);
  writer.commit();
  const KlBaseReader base(path);

  EXPECT_THAT([&] { run_perplexity(*model, window_text(40, 1), options, nullptr, &base); },
              ::testing::ThrowsMessage<Error>(AllOf(HasSubstr(path), HasSubstr("another text"))));
  PerplexityOptions wider = options;
  wider.context = 20;
  EXPECT_THAT([&] { run_perplexity(*model, text, wider, nullptr, &base); },
              ::testing::ThrowsMessage<Error>(AllOf(HasSubstr(path), HasSubstr("--context 16"))));
}

TEST(PerplexityTest, BosComesFromTokenizerConfig) {
  const BpeTokenizer& tokenizer = runtime_test::byte_tokenizer();
  CheckpointText settings;
  EXPECT_EQ(perplexity_tokens("ab", tokenizer, settings), runtime_test::byte_ids("ab"));
  settings.add_bos_token = true;
  settings.bos_token = "]~!b[";
  EXPECT_THROW(perplexity_tokens("ab", tokenizer, settings), Error);  // no id for it
  settings.bos_token_id = tokenizer.token_id("]~!b[");
  ASSERT_TRUE(settings.bos_token_id);
  const std::vector<int32_t> ids = perplexity_tokens("ab", tokenizer, settings);
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[0], *settings.bos_token_id);
}

}  // namespace
}  // namespace minimax
