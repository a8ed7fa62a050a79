// Tests of the byte-level BPE trainer: hand-checked merges, determinism, the committed tokenizer.
#include "text/bpe_trainer.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "base/error.h"
#include "test_data.h"
#include "text/bpe_tokenizer.h"

namespace minimax {
namespace {

using nlohmann::json;

TEST(BpeTrainer, MergesMostFrequentPairFirst) {
  // Words: "ab" x1, " ab" x2, "abc" x1 (o200k keeps the leading space on a word).
  const json tok = train_byte_level_bpe({"ab ab ab", "abc"}, 259, {});
  const json expected = json::array({{"a", "b"}, {"Ġ", "ab"}, {"ab", "c"}});
  EXPECT_EQ(tok["model"]["merges"], expected);
  EXPECT_EQ(tok["model"]["vocab"]["ab"], 256);
  EXPECT_EQ(tok["model"]["vocab"]["Ġab"], 257);
  EXPECT_EQ(tok["model"]["vocab"]["abc"], 258);
  EXPECT_EQ(tok["model"]["vocab"].size(), 259u);
}

TEST(BpeTrainer, BreaksTiesBySmallestPair) {
  const json tok = train_byte_level_bpe({"xy", "ab"}, 257, {});
  EXPECT_EQ(tok["model"]["merges"], json::array({{"a", "b"}}));
}

TEST(BpeTrainer, StopsWhenNothingIsLeftToMerge) {
  const json tok = train_byte_level_bpe({"abab"}, 5000, {});
  // "abab" -> (a,b) -> "ab ab" -> (ab,ab): two merges and nothing more.
  EXPECT_EQ(tok["model"]["merges"].size(), 2u);
  EXPECT_EQ(tok["model"]["vocab"].size(), 258u);
}

TEST(BpeTrainer, AllByteTokensAndSpecialsArePresent) {
  const std::vector<std::string> specials = {"<s>", "[e~["};
  const json tok = train_byte_level_bpe({"hello hello world"}, 300, specials);
  const BpeTokenizer tokenizer = BpeTokenizer::from_json(tok, "trained in test");
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_EQ(tokenizer.token_bytes(b), one) << "byte " << b;
  }
  const int32_t vocab = static_cast<int32_t>(tok["model"]["vocab"].size());
  ASSERT_EQ(tokenizer.token_id("<s>"), vocab);
  ASSERT_EQ(tokenizer.token_id("[e~["), vocab + 1);
  EXPECT_TRUE(tokenizer.is_special(vocab + 1));
  EXPECT_FALSE(tokenizer.is_special(0));
  EXPECT_EQ(tokenizer.vocab_size(), vocab + 2);
  EXPECT_EQ(tok["pre_tokenizer"]["pretokenizers"][0]["behavior"], "Isolated");
  EXPECT_EQ(tok["model"]["byte_fallback"], false);
  EXPECT_EQ(tok["added_tokens"][1]["special"], true);
}

TEST(BpeTrainer, SpecialTokensAreNotLearnedFromText) {
  const json tok = train_byte_level_bpe({"[e~[[e~[[e~[ x"}, 400, {"[e~["});
  // Only " x" can be learned; any merge involving '~', '[' or 'e' would come from the special.
  EXPECT_EQ(tok["model"]["merges"], json::array({{"Ġ", "x"}}));
}

TEST(BpeTrainer, RejectsBadArguments) {
  EXPECT_THROW(train_byte_level_bpe({"x"}, 100, {}), Error);
  EXPECT_THROW(train_byte_level_bpe({"x"}, 300, {"<a>", "<a>"}), Error);
  EXPECT_THROW(train_byte_level_bpe({"x"}, 300, {""}), Error);
  EXPECT_THROW(train_byte_level_bpe({"bad \xFF utf8"}, 300, {}), Error);
  try {
    train_byte_level_bpe({"x"}, 10, {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocab_size 10"), std::string::npos) << e.what();
  }
}

TEST(BpeTrainer, IsDeterministic) {
  const auto texts = testing::training_texts();
  const json first = train_byte_level_bpe(texts, 600, minimax_special_tokens());
  const json second = train_byte_level_bpe(texts, 600, minimax_special_tokens());
  EXPECT_EQ(first, second);
}

// The committed trained_tokenizer.json is this trainer's output; the golden ids in
// golden_trained.json were computed from it by Hugging Face tokenizers. Regenerate it with
// MINIMAX_WRITE_GOLDEN=1 (then rerun tools/tokenizer_golden).
TEST(BpeTrainer, ReproducesCommittedTokenizer) {
  const json trained = train_byte_level_bpe(testing::training_texts(), testing::kTrainedVocabSize,
                                            minimax_special_tokens());
  const std::string path = testing::tokenizer_data("trained_tokenizer.json");
  if (const char* write = std::getenv("MINIMAX_WRITE_GOLDEN"); write && std::string(write) == "1") {
    std::ofstream(path, std::ios::binary) << trained.dump(1) << "\n";
  }
  const json committed = testing::read_json(path);
  EXPECT_EQ(trained, committed);
  EXPECT_EQ(trained["model"]["vocab"].size(), static_cast<size_t>(testing::kTrainedVocabSize));
}

TEST(BpeTrainer, TrainedTokenizerCompressesItsCorpusAndRoundTrips) {
  const BpeTokenizer tokenizer =
      BpeTokenizer::from_file(testing::tokenizer_data("trained_tokenizer.json"));
  const std::string corpus = testing::read_file(testing::tokenizer_data("train_corpus.txt"));
  const std::vector<int32_t> ids = tokenizer.encode(corpus);
  EXPECT_LT(ids.size() * 3, corpus.size());  // well under a token per three bytes
  EXPECT_EQ(tokenizer.decode(ids), corpus);
}

}  // namespace
}  // namespace minimax
