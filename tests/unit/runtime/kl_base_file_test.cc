// Base files of `minimax perplexity`: what is written reads back bit for bit, a file appears only
// when complete, and a truncated, corrupted, foreign or mismatched file is refused with a message
// naming it.
#include "runtime/kl_base_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "scratch_dir.h"

namespace minimax {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<int32_t> kSampleText = {5, 9, 2, 7, 7, 1, 0, 3};

KlBaseHeader sample_base_header(uint64_t positions) {
  KlBaseHeader h;
  h.top_k = 2;
  h.vocab = 10;
  h.context = 4;
  h.token_count = kSampleText.size();
  h.tokens_hash = hash_token_ids(kSampleText);
  h.windows = positions;
  h.positions = positions;
  return h;
}

PositionLogprobs sample_position(int i) {
  PositionLogprobs p;
  p.next_logprob = -0.5f * static_cast<float>(i);
  p.rest_logprob = -3.25f;
  p.ids = {i, 9 - i};
  p.logprobs = {-0.125f, -1.0f - static_cast<float>(i)};
  return p;
}

std::string write_sample_base(const ScratchDir& dir, uint64_t positions = 3) {
  const std::string path = dir.file("base.kl");
  KlBaseWriter writer(path, sample_base_header(positions));
  for (uint64_t i = 0; i < positions; ++i) writer.add(sample_position(static_cast<int>(i)));
  writer.commit();
  return path;
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void overwrite_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::string base_open_error(const std::string& path) {
  try {
    KlBaseReader reader(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(KlBaseFileTest, WhatIsWrittenReadsBack) {
  ScratchDir dir;
  const std::string path = write_sample_base(dir);
  EXPECT_EQ(std::filesystem::file_size(path), kKlBaseHeaderBytes + 3 * kl_base_record_bytes(2) + 8);
  KlBaseReader reader(path);
  const KlBaseHeader& h = reader.header();
  EXPECT_EQ(h.top_k, 2u);
  EXPECT_EQ(h.vocab, 10u);
  EXPECT_EQ(h.context, 4u);
  EXPECT_EQ(h.token_count, kSampleText.size());
  EXPECT_EQ(h.tokens_hash, hash_token_ids(kSampleText));
  EXPECT_EQ(h.positions, 3u);
  for (int i = 0; i < 3; ++i) {
    const PositionLogprobs got = reader.position(i), want = sample_position(i);
    EXPECT_EQ(got.next_logprob, want.next_logprob);
    EXPECT_EQ(got.rest_logprob, want.rest_logprob);
    EXPECT_EQ(got.ids, want.ids);
    EXPECT_EQ(got.logprobs, want.logprobs);
  }
  EXPECT_NO_THROW(reader.check_matches(sample_base_header(3)));
}

TEST(KlBaseFileTest, TheFileAppearsOnlyWhenComplete) {
  ScratchDir dir;
  const std::string path = dir.file("base.kl");
  {
    KlBaseWriter writer(path, sample_base_header(2));
    writer.add(sample_position(0));
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_TRUE(std::filesystem::exists(path + ".tmp"));
    EXPECT_THAT([&] { writer.commit(); },
                ::testing::ThrowsMessage<Error>(AllOf(HasSubstr(path), HasSubstr("1 of the 2"))));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(KlBaseFileTest, WriterRefusesPositionsOfAnotherK) {
  ScratchDir dir;
  KlBaseWriter writer(dir.file("base.kl"), sample_base_header(1));
  PositionLogprobs wide = sample_position(0);
  wide.ids.push_back(4);
  wide.logprobs.push_back(-2);
  EXPECT_THROW(writer.add(wide), Error);
}

TEST(KlBaseFileTest, TruncatedOrPaddedFilesAreRefused) {
  ScratchDir dir;
  const std::string path = write_sample_base(dir);
  const std::string whole = file_bytes(path);
  overwrite_file(path, whole.substr(0, whole.size() - 20));
  EXPECT_THAT(base_open_error(path), AllOf(HasSubstr(path), HasSubstr("truncated")));
  overwrite_file(path, whole.substr(0, 40));
  EXPECT_THAT(base_open_error(path), AllOf(HasSubstr(path), HasSubstr("truncated")));
  overwrite_file(path, whole + "xx");
  EXPECT_THAT(base_open_error(path), AllOf(HasSubstr(path), HasSubstr("trailing bytes")));
}

TEST(KlBaseFileTest, CorruptedFilesAreRefused) {
  ScratchDir dir;
  const std::string path = write_sample_base(dir);
  std::string bytes = file_bytes(path);
  bytes[kKlBaseHeaderBytes + 13] ^= 0x10;  // a bit of the first position's ids
  overwrite_file(path, bytes);
  EXPECT_THAT(base_open_error(path), AllOf(HasSubstr(path), HasSubstr("corrupted")));
  // A header whose sizes do not fit the file at all.
  bytes = file_bytes(write_sample_base(dir));
  bytes[12] = 0x7f;  // top_k
  overwrite_file(path, bytes);
  EXPECT_THAT(base_open_error(path), HasSubstr(path));
}

TEST(KlBaseFileTest, OtherFilesAndVersionsAreRefused) {
  ScratchDir dir;
  const std::string path = dir.file("other.bin");
  overwrite_file(path, std::string(200, 'x'));
  EXPECT_THAT(base_open_error(path), AllOf(HasSubstr(path), HasSubstr("not a base file")));
  overwrite_file(path, "");
  EXPECT_THAT(base_open_error(path), HasSubstr(path));
  EXPECT_THAT(base_open_error(dir.file("missing.kl")), HasSubstr("missing.kl"));

  std::string bytes = file_bytes(write_sample_base(dir));
  bytes[8] = 2;  // version
  const std::string v2 = dir.file("v2.kl");
  overwrite_file(v2, bytes);
  EXPECT_THAT(base_open_error(v2), AllOf(HasSubstr(v2), HasSubstr("version 2")));
}

TEST(KlBaseFileTest, AMismatchedRunIsRefusedNamingTheFile) {
  ScratchDir dir;
  const std::string path = write_sample_base(dir);
  KlBaseReader reader(path);
  auto refusal = [&](const KlBaseHeader& run) {
    try {
      reader.check_matches(run);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  KlBaseHeader run = sample_base_header(3);
  run.vocab = 11;
  EXPECT_THAT(refusal(run), AllOf(HasSubstr(path), HasSubstr("10 logits"), HasSubstr("has 11")));
  run = sample_base_header(3);
  run.context = 8;
  EXPECT_THAT(refusal(run), AllOf(HasSubstr(path), HasSubstr("--context 4")));
  run = sample_base_header(3);
  std::vector<int32_t> other = kSampleText;
  other[3] = 8;
  run.tokens_hash = hash_token_ids(other);
  EXPECT_THAT(refusal(run), AllOf(HasSubstr(path), HasSubstr("another text")));
  run = sample_base_header(3);
  run.token_count = 9;
  EXPECT_THAT(refusal(run), AllOf(HasSubstr(path), HasSubstr("another text")));
  run = sample_base_header(3);
  run.top_k = 7;  // a run compares over the base's own K
  EXPECT_EQ(refusal(run), "no error");
}

TEST(KlBaseFileTest, TokenHashDependsOnEveryIdAndItsPlace) {
  std::vector<int32_t> swapped = kSampleText;
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(hash_token_ids(kSampleText), hash_token_ids(swapped));
  EXPECT_NE(hash_token_ids(kSampleText), hash_token_ids(std::span(kSampleText).first(7)));
  EXPECT_EQ(hash_token_ids(kSampleText), hash_token_ids(std::vector<int32_t>(kSampleText)));
}

}  // namespace
}  // namespace minimax
