// Tests of BpeTokenizer on the committed trained tokenizer and on tiny hand-made ones: merge
// order, ignore_merges, both merge formats, special-token splitting, lookups, round trips.
#include "text/bpe_tokenizer.h"

#include <gtest/gtest.h>

#include <thread>

#include "base/error.h"
#include "test_data.h"
#include "text/bpe_trainer.h"
#include "text/byte_level.h"

namespace minimax {
namespace {

using nlohmann::json;

// A byte-level tokenizer whose vocabulary is the 256 bytes plus `extra` tokens (ids 256..).
json tiny_tokenizer(const std::vector<std::string>& extra, const json& merges, bool ignore_merges) {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[to_byte_level(std::string(1, static_cast<char>(b)))] = b;
  for (size_t i = 0; i < extra.size(); ++i) vocab[extra[i]] = 256 + i;
  return {
      {"model",
       {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"ignore_merges", ignore_merges}}},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
      {"decoder", {{"type", "ByteLevel"}}}};
}

using testing::trained;

std::string multilingual() {
  return testing::read_file(testing::tokenizer_data("multilingual.txt"));
}

TEST(BpeTokenizer, LowestRankMergeWinsWhateverItsPosition) {
  const auto bc_first = BpeTokenizer::from_json(
      tiny_tokenizer({"ab", "bc"}, json::array({{"b", "c"}, {"a", "b"}}), false), "tiny");
  EXPECT_EQ(bc_first.encode("abc"), (std::vector<int32_t>{'a', 257}));
  const auto ab_first = BpeTokenizer::from_json(
      tiny_tokenizer({"ab", "bc"}, json::array({{"a", "b"}, {"b", "c"}}), false), "tiny");
  EXPECT_EQ(ab_first.encode("abc"), (std::vector<int32_t>{256, 'c'}));
  // Equal pairs merge from the left: "aaa" -> "aa" "a".
  const auto aa = BpeTokenizer::from_json(tiny_tokenizer({"aa"}, json::array({"a a"}), false), "t");
  EXPECT_EQ(aa.encode("aaa"), (std::vector<int32_t>{256, 'a'}));
}

TEST(BpeTokenizer, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  // "abc" is in the vocabulary but no merge builds it from "ab" + "c".
  const json merges = json::array({{"a", "b"}});
  const auto with_merges =
      BpeTokenizer::from_json(tiny_tokenizer({"ab", "abc"}, merges, false), "tiny");
  EXPECT_EQ(with_merges.encode("abc"), (std::vector<int32_t>{256, 'c'}));
  const auto ignoring =
      BpeTokenizer::from_json(tiny_tokenizer({"ab", "abc"}, merges, true), "tiny");
  EXPECT_EQ(ignoring.encode("abc"), (std::vector<int32_t>{257}));
}

TEST(BpeTokenizer, BothMergeFormatsGiveTheSameIds) {
  json as_pairs = testing::read_json(testing::tokenizer_data("trained_tokenizer.json"));
  json as_strings = as_pairs;
  for (json& merge : as_strings["model"]["merges"]) {
    merge = merge[0].get<std::string>() + " " + merge[1].get<std::string>();
  }
  ASSERT_TRUE(as_strings["model"]["merges"][0].is_string());
  const auto a = BpeTokenizer::from_json(as_pairs, "pairs");
  const auto b = BpeTokenizer::from_json(as_strings, "strings");
  const std::string text = multilingual();
  EXPECT_EQ(a.encode(text), b.encode(text));
  EXPECT_GT(a.encode(text).size(), 100u);
}

TEST(BpeTokenizer, RoundTripsMultilingualText) {
  const std::string text = multilingual();
  const std::vector<int32_t> ids = trained().encode(text);
  EXPECT_LT(ids.size(), text.size());
  EXPECT_EQ(trained().decode(ids), text);
  // A long text (cache hits across repeats) round-trips too, and encodes the same way twice.
  std::string long_text;
  for (int i = 0; i < 200; ++i) long_text += text;
  const std::vector<int32_t> long_ids = trained().encode(long_text);
  EXPECT_EQ(trained().decode(long_ids), long_text);
  EXPECT_EQ(trained().encode(long_text), long_ids);
}

TEST(BpeTokenizer, SplitsOutSpecialTokens) {
  const BpeTokenizer& tok = trained();
  const int32_t role = *tok.token_id("]~b]");
  const int32_t eos = *tok.token_id("[e~[");
  const int32_t think = *tok.token_id("<think>");
  const std::string text = "]~b]user\nhi[e~[]~b]ai\n<think>";
  const std::vector<int32_t> ids = tok.encode(text);
  ASSERT_GE(ids.size(), 5u);
  EXPECT_EQ(ids.front(), role);
  EXPECT_EQ(ids.back(), think);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), eos), 1);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), role), 2);
  EXPECT_EQ(tok.decode(ids), text);
  EXPECT_EQ(tok.decode(ids, /*skip_special=*/true), "user\nhiai\n");

  // Without parse_special the markers are ordinary text: no special ids, same text back.
  const std::vector<int32_t> plain = tok.encode(text, /*parse_special=*/false);
  for (int32_t id : plain) EXPECT_FALSE(tok.is_special(id)) << id;
  EXPECT_EQ(tok.decode(plain), text);
}

TEST(BpeTokenizer, LongestAddedTokenWinsAtTheSamePosition) {
  json config = tiny_tokenizer({}, json::array(), false);
  config["added_tokens"] = {{{"id", 300}, {"content", "<a>"}, {"special", true}},
                            {{"id", 301}, {"content", "<a>b"}, {"special", true}},
                            {{"id", 302}, {"content", "a>b"}, {"special", true}}};
  const auto tok = BpeTokenizer::from_json(config, "tiny");
  // At offset 0 "<a>b" beats "<a>"; the later "a>b" overlaps it and loses (leftmost first).
  EXPECT_EQ(tok.encode("<a>b"), (std::vector<int32_t>{301}));
  EXPECT_EQ(tok.encode("x<a>"), (std::vector<int32_t>{'x', 300}));
  EXPECT_EQ(tok.encode("<a>a>b"), (std::vector<int32_t>{300, 302}));
}

TEST(BpeTokenizer, Lookups) {
  const BpeTokenizer& tok = trained();
  const int specials = static_cast<int>(minimax_special_tokens().size());
  EXPECT_EQ(tok.vocab_size(), testing::kTrainedVocabSize + specials);
  for (int i = 0; i < specials; ++i) {
    const int32_t id = testing::kTrainedVocabSize + i;
    EXPECT_EQ(tok.token_text(id), minimax_special_tokens()[i]);
    EXPECT_EQ(tok.token_id(minimax_special_tokens()[i]), id);
    EXPECT_TRUE(tok.is_special(id));
  }
  EXPECT_EQ(tok.token_id("Ġ"), ' ');  // byte tokens have their byte's id in a trained tokenizer
  EXPECT_EQ(tok.token_text('\n'), "Ċ");
  EXPECT_EQ(tok.token_bytes('\n'), "\n");
  EXPECT_FALSE(tok.is_special(' '));
  EXPECT_FALSE(tok.token_id("no such token").has_value());
  EXPECT_THROW(tok.token_text(tok.vocab_size()), Error);
  EXPECT_THROW(tok.token_text(-1), Error);
  for (int32_t id = 0; id < 300; ++id) EXPECT_EQ(tok.token_id(tok.token_text(id)), id);
}

TEST(BpeTokenizer, DecodeDropsIdsWithoutAToken) {
  const BpeTokenizer& tok = trained();
  const std::vector<int32_t> ids = {'a', -5, tok.vocab_size(), 1 << 30, 'b'};
  EXPECT_EQ(tok.decode(ids), "ab");
}

TEST(BpeTokenizer, RejectsInvalidUtf8Input) {
  try {
    trained().encode("ok \xC3(");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset 3"), std::string::npos) << e.what();
  }
}

TEST(BpeTokenizer, ThreadsGetTheSameIds) {
  const std::string text = multilingual();
  const std::vector<int32_t> expected = trained().encode(text);
  std::vector<std::vector<int32_t>> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) results[t] = trained().encode(text + std::to_string(i));
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& r : results) {
    ASSERT_GE(r.size(), expected.size());
    EXPECT_TRUE(std::equal(expected.begin(), expected.end() - 2, r.begin()));
  }
}

}  // namespace
}  // namespace minimax
