// ModelSession and TextModel on tiny M2 / M3 checkpoints: prefix reuse and chunked prefill give
// the logits of a fresh full prefill, greedy generation is repeatable, chat rendering and EOS ids.
#include "runtime/model_session.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "runtime/text_model.h"
#include "runtime_fixture.h"

namespace minimax {
namespace {

using runtime_test::tiny_model_dir;

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

class ModelSessionTest : public ::testing::TestWithParam<Arch> {
 protected:
  static ModelOptions options() {
    ModelOptions o;
    o.threads = 1;
    return o;
  }
};

TEST_P(ModelSessionTest, ReusedPrefixAndChunksGiveTheFullPrefillLogits) {
  auto model = Model::load(tiny_model_dir(GetParam()), options());
  std::vector<int32_t> first, second;
  for (int i = 0; i < 40; ++i) first.push_back((i * 37 + 5) % 300);
  second.assign(first.begin(), first.begin() + 30);
  for (int i = 0; i < 12; ++i) second.push_back((i * 11 + 3) % 300);

  ModelSession reused(*model, 128);
  reused.prefill(first);
  reused.decode(17);
  const std::vector<float> got = reused.prefill(second);
  EXPECT_EQ(reused.reused_prefix(), 30);
  EXPECT_EQ(reused.tokens(), second);

  ModelSession fresh(*model, 128);
  const std::vector<float> want = fresh.prefill(second);
  EXPECT_EQ(fresh.reused_prefix(), 0);
  EXPECT_LT(max_abs_diff(got, want), 1e-4f);

  ModelSession chunked(*model, 128, 5);
  EXPECT_LT(max_abs_diff(chunked.prefill(second), want), 1e-4f);

  // Decoding token by token reaches the same place as prefilling the whole sequence.
  ModelSession stepwise(*model, 128);
  std::vector<float> last = stepwise.prefill(std::span(second).first(1));
  for (size_t i = 1; i < second.size(); ++i) last = stepwise.decode(second[i]);
  EXPECT_LT(max_abs_diff(last, want), 1e-4f);

  // The same prompt again recomputes only its last token.
  fresh.prefill(second);
  EXPECT_EQ(fresh.reused_prefix(), static_cast<int64_t>(second.size()) - 1);
}

TEST_P(ModelSessionTest, ContextOverflowIsAnError) {
  auto model = Model::load(tiny_model_dir(GetParam()), options());
  ModelSession session(*model, 4);
  const std::vector<int32_t> prompt = {1, 2, 3, 4};
  session.prefill(prompt);
  EXPECT_THROW(session.decode(5), Error);
}

TEST_P(ModelSessionTest, GreedyChatGenerationRepeats) {
  auto text_model = TextModel::load(tiny_model_dir(GetParam()), options());
  const nlohmann::ordered_json messages = {{{"role", "user"}, {"content", "What is 12 + 35?"}}};
  const std::string prompt_text = text_model->render_chat(messages);
  EXPECT_NE(prompt_text.find("What is 12 + 35?"), std::string::npos);
  EXPECT_TRUE(prompt_text.starts_with("]~!b[]~b]system\n"));
  const std::vector<int32_t> prompt = text_model->encode(prompt_text);
  SamplingParams greedy;
  greedy.temperature = 0;
  const StopConditions stop = text_model->default_stop(12);
  ASSERT_EQ(stop.stop_token_ids.size(), 1u);
  const auto generate = [&] {
    ModelSession session(text_model->model(), 1024);
    Generator generator(session, text_model->tokenizer());
    return generator.generate(prompt, greedy, stop);
  };
  const GenerationResult a = generate(), b = generate();
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.text, b.text);
  EXPECT_FALSE(a.tokens.empty());
  EXPECT_EQ(a.stats.prompt_tokens, static_cast<int64_t>(prompt.size()));
}

INSTANTIATE_TEST_SUITE_P(Archs, ModelSessionTest, ::testing::Values(Arch::kM2, Arch::kM3),
                         [](const auto& info) { return info.param == Arch::kM2 ? "M2" : "M3"; });

}  // namespace
}  // namespace minimax
