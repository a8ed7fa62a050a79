// Ignore-list matching: fnmatch globs, start-anchored regexes and each format's rule.
#include "checkpoint/name_patterns.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/error.h"

namespace minimax {
namespace {

// Expected values below are what Python's fnmatch.fnmatchcase / re.match return for the same
// arguments (checked with python3 when the cases were written).
TEST(NamePatternsTest, GlobFollowsFnmatch) {
  EXPECT_TRUE(glob_match("*self_attn*", "model.layers.0.self_attn.q_proj"));
  EXPECT_FALSE(glob_match("*self_attn*", "model.layers.0.block_sparse_moe.gate"));
  EXPECT_TRUE(glob_match("*block_sparse_moe.gate", "model.layers.7.block_sparse_moe.gate"));
  EXPECT_FALSE(glob_match("*block_sparse_moe.gate", "model.layers.7.block_sparse_moe.gate_x"));
  EXPECT_FALSE(glob_match(
      "*mlp.gate_proj", "language_model.model.layers.3.block_sparse_moe.shared_experts.gate_proj"));
  EXPECT_TRUE(glob_match("*mlp.gate_proj", "language_model.model.layers.0.mlp.gate_proj"));
  // Whole-name match: no implicit prefix or suffix.
  EXPECT_FALSE(glob_match("lm_head", "language_model.lm_head"));
  EXPECT_TRUE(glob_match("*lm_head", "language_model.lm_head"));
  EXPECT_FALSE(glob_match("model.layers.1", "model.layers.10"));
  // `*` crosses dots; `?` is exactly one character.
  EXPECT_TRUE(glob_match("model.*.w1", "model.layers.3.block_sparse_moe.experts.0.w1"));
  EXPECT_TRUE(glob_match("model.layers.?.mlp", "model.layers.1.mlp"));
  EXPECT_FALSE(glob_match("model.layers.?.mlp", "model.layers.10.mlp"));
  EXPECT_TRUE(glob_match("*a*b?c*", "xxaybzc"));
  EXPECT_FALSE(glob_match("*a*b?c", "xxaybzcd"));
  EXPECT_TRUE(glob_match("**", ""));
  EXPECT_FALSE(glob_match("?", ""));
}

TEST(NamePatternsTest, GlobSets) {
  EXPECT_TRUE(glob_match("model.layers.[0-2].mlp*", "model.layers.2.mlp.up_proj"));
  EXPECT_FALSE(glob_match("model.layers.[0-2].mlp*", "model.layers.3.mlp.up_proj"));
  EXPECT_TRUE(glob_match("x[!0-2]y", "x3y"));
  EXPECT_FALSE(glob_match("x[!0-2]y", "x1y"));
  EXPECT_FALSE(glob_match("[z-a]", "m"));   // a reversed range is empty
  EXPECT_TRUE(glob_match("a[]]c", "a]c"));  // `]` first in the set is a member
  EXPECT_TRUE(glob_match("a[!]]b", "axb"));
  EXPECT_FALSE(glob_match("a[!]]b", "a]b"));
  EXPECT_TRUE(glob_match("a[-]b", "a-b"));
  EXPECT_TRUE(glob_match("a[b-]c", "a-c"));
  EXPECT_TRUE(glob_match("[a-c-e]", "-"));
  EXPECT_FALSE(glob_match("[a-c-e]", "d"));
  EXPECT_TRUE(glob_match("a[b", "a[b"));  // no closing `]`: a literal `[`
  EXPECT_FALSE(glob_match("a[b", "ab"));
}

TEST(NamePatternsTest, RegexIsAnchoredAtTheStartOnly) {
  EXPECT_TRUE(
      regex_match_start(".*block_sparse_moe\\.gate$", "model.layers.0.block_sparse_moe.gate"));
  EXPECT_FALSE(regex_match_start(".*block_sparse_moe\\.gate$",
                                 "model.layers.0.block_sparse_moe.gate.weight"));
  EXPECT_TRUE(regex_match_start("model", "model.layers.0.self_attn.q_proj"));  // not a full match
  EXPECT_FALSE(regex_match_start("self_attn", "model.layers.0.self_attn.q_proj"));
  EXPECT_TRUE(regex_match_start("model\\.layers\\.(1|2)\\.", "model.layers.2.mlp"));
  EXPECT_FALSE(regex_match_start("model\\.layers\\.(1|2)\\.", "model.layers.12.mlp"));
  EXPECT_THAT([] { regex_match_start("*lm_head", "lm_head"); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("'*lm_head' does not compile")));
}

TEST(NamePatternsTest, ModulesToNotConvert) {
  // The official FP8 list ["gate", "e_score_correction_bias", "lm_head"].
  EXPECT_TRUE(matches_modules_to_not_convert("gate", "model.layers.3.block_sparse_moe.gate"));
  EXPECT_FALSE(
      matches_modules_to_not_convert("gate", "language_model.model.layers.0.mlp.gate_proj"));
  EXPECT_FALSE(
      matches_modules_to_not_convert("gate", "model.layers.3.block_sparse_moe.experts.0.w1"));
  EXPECT_TRUE(matches_modules_to_not_convert("lm_head", "lm_head"));
  EXPECT_TRUE(matches_modules_to_not_convert("lm_head", "language_model.lm_head"));
  EXPECT_FALSE(matches_modules_to_not_convert("e_score_correction_bias",
                                              "model.layers.3.block_sparse_moe.gate"));
  // A prefix entry reaches its subtree (re.match at the start).
  EXPECT_TRUE(matches_modules_to_not_convert("vision_tower", "vision_tower.blocks.0.attn.qkv"));
  EXPECT_FALSE(matches_modules_to_not_convert("vision_tower", "model.layers.0.self_attn.q_proj"));
}

TEST(NamePatternsTest, CompressedTensorsIgnore) {
  EXPECT_TRUE(matches_compressed_tensors("lm_head", "lm_head"));
  EXPECT_FALSE(matches_compressed_tensors("lm_head", "language_model.lm_head"));   // exact only
  EXPECT_FALSE(matches_compressed_tensors("*lm_head", "language_model.lm_head"));  // no globs
  EXPECT_TRUE(matches_compressed_tensors("re:.*block_sparse_moe\\.gate$",
                                         "model.layers.61.block_sparse_moe.gate"));
  EXPECT_FALSE(matches_compressed_tensors("re:.*block_sparse_moe\\.gate$",
                                          "model.layers.61.block_sparse_moe.experts.0.w1"));
  EXPECT_TRUE(matches_compressed_tensors("re:^vision_tower\\.", "vision_tower.blocks.0.fc1"));
  EXPECT_FALSE(matches_compressed_tensors("re:self_attn", "model.layers.0.self_attn.q_proj"));
}

TEST(NamePatternsTest, QuarkExclude) {
  EXPECT_TRUE(matches_quark("lm_head", "lm_head"));
  EXPECT_FALSE(matches_quark("lm_head", "language_model.lm_head"));
  EXPECT_TRUE(matches_quark("*lm_head", "language_model.lm_head"));
  EXPECT_TRUE(matches_quark("*block_sparse_moe.gate*", "model.layers.0.block_sparse_moe.gate"));
  EXPECT_FALSE(
      matches_quark("*block_sparse_moe.gate*", "model.layers.0.block_sparse_moe.experts.1.w3"));
  EXPECT_TRUE(matches_quark("re:.*\\.self_attn\\..*", "model.layers.0.self_attn.o_proj"));
  EXPECT_FALSE(matches_quark("re:.*\\.self_attn\\..*", "model.layers.0.mlp.down_proj"));
}

TEST(NamePatternsTest, ModelOptExclude) {
  // "path*" is the module and its subtree, not every name that starts with the text.
  EXPECT_TRUE(matches_modelopt("model.layers.1.self_attn*", "model.layers.1.self_attn.q_proj"));
  EXPECT_TRUE(matches_modelopt("model.layers.1.self_attn*", "model.layers.1.self_attn"));
  EXPECT_FALSE(matches_modelopt("model.layers.1.self_attn*", "model.layers.10.self_attn.q_proj"));
  EXPECT_FALSE(matches_modelopt("model.layers.1.self_attn*", "model.layers.1.self_attn_x"));
  EXPECT_FALSE(matches_modelopt("model.layers.1*", "model.layers.10.mlp.up_proj"));
  EXPECT_TRUE(matches_modelopt("model.layers.1*", "model.layers.1.mlp.up_proj"));
  EXPECT_TRUE(matches_modelopt("*block_sparse_moe.gate*", "model.layers.9.block_sparse_moe.gate"));
  // Exact and substring entries.
  EXPECT_TRUE(matches_modelopt("model.layers.1.block_sparse_moe.gate",
                               "model.layers.1.block_sparse_moe.gate"));
  EXPECT_FALSE(matches_modelopt("model.layers.1.block_sparse_moe.gate",
                                "model.layers.11.block_sparse_moe.gate"));
  EXPECT_TRUE(matches_modelopt("lm_head", "language_model.lm_head"));
  EXPECT_FALSE(matches_modelopt("lm_head", "model.layers.0.block_sparse_moe.experts.0.w1"));
  EXPECT_TRUE(matches_modelopt("model.layers.2.*", "model.layers.2.mlp.up_proj"));
  EXPECT_FALSE(matches_modelopt("model.layers.2.*", "model.layers.20.mlp.up_proj"));
}

}  // namespace
}  // namespace minimax
