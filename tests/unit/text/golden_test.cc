// Compares BpeTokenizer with Hugging Face `tokenizers` on the golden files that
// tools/tokenizer_golden/make_golden.mjs wrote: the ids of every text and the text of every decode.
#include <gtest/gtest.h>

#include <filesystem>

#include "test_data.h"
#include "text/bpe_tokenizer.h"
#include "text/detokenizer.h"

namespace minimax {
namespace {

using nlohmann::json;

class GoldenTest : public ::testing::TestWithParam<const char*> {
 protected:
  // Loads golden_<name>.json and its tokenizer, or skips when an uncommitted tokenizer is absent.
  void SetUp() override {
    golden_ =
        testing::read_json(testing::tokenizer_data(std::string("golden_") + GetParam() + ".json"));
    const std::string path = testing::repo_path(golden_["tokenizer"].get<std::string>());
    if (!golden_["committed"].get<bool>() && !std::filesystem::exists(path)) {
      GTEST_SKIP() << path << " is not installed; run `" << golden_["install"].get<std::string>()
                   << "` to check against this tokenizer";
    }
    tokenizer_ = std::make_unique<BpeTokenizer>(BpeTokenizer::from_file(path));
  }

  json golden_;
  std::unique_ptr<BpeTokenizer> tokenizer_;
};

TEST_P(GoldenTest, EncodesLikeHuggingFace) {
  const std::string file_text = testing::read_file(testing::tokenizer_data("multilingual.txt"));
  ASSERT_EQ(golden_["encodes"][0]["text"].get<std::string>(), file_text)
      << "golden file is stale: rerun tools/tokenizer_golden/make_golden.mjs";
  for (const json& entry : golden_["encodes"]) {
    const std::string text = entry["text"].get<std::string>();
    const auto expected = entry["ids"].get<std::vector<int32_t>>();
    const auto got = tokenizer_->encode(text, entry["parse_special"].get<bool>());
    EXPECT_EQ(got, expected) << entry["name"].get<std::string>() << ": " << text;
  }
}

TEST_P(GoldenTest, DecodesLikeHuggingFace) {
  for (const json& entry : golden_["decodes"]) {
    const auto ids = entry["ids"].get<std::vector<int32_t>>();
    const bool skip = entry["skip_special"].get<bool>();
    EXPECT_EQ(tokenizer_->decode(ids, skip), entry["text"].get<std::string>())
        << entry["name"].get<std::string>();
  }
}

// Streaming the same ids one at a time gives the same text as decoding them at once.
TEST_P(GoldenTest, IncrementalDetokenizerMatchesDecode) {
  for (const json& entry : golden_["encodes"]) {
    const auto ids = entry["ids"].get<std::vector<int32_t>>();
    for (bool skip : {false, true}) {
      IncrementalDetokenizer detokenizer(*tokenizer_, skip);
      std::string streamed;
      for (int32_t id : ids) streamed += detokenizer.push(id);
      streamed += detokenizer.flush();
      EXPECT_EQ(streamed, tokenizer_->decode(ids, skip)) << entry["name"].get<std::string>();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, GoldenTest,
                         ::testing::Values("trained", "trained_flags", "gptoss", "qwen3"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace minimax
