// Teacher-forced agreement and loss from prompt_logprobs lists.
#include "gates/agreement.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;

json entry(std::initializer_list<std::tuple<int, double, int>> candidates) {
  json out = json::object();
  for (const auto& [id, logprob, rank] : candidates)
    out[std::to_string(id)] = {{"logprob", logprob}, {"rank", rank}, {"decoded_token", "t"}};
  return out;
}

TEST(PromptPositions, ActualTokenIsTheRankOneWhenAloneAndTheOtherWhenNot) {
  const json list =
      json::array({nullptr, entry({{7, -0.5, 1}}), entry({{3, -0.2, 1}, {9, -2.0, 4}})});
  const auto positions = read_prompt_positions(list, nullptr, "text");
  ASSERT_EQ(positions.size(), 2u);
  EXPECT_EQ(positions[0].actual_id, 7);
  EXPECT_EQ(positions[0].top_id, 7);
  EXPECT_DOUBLE_EQ(positions[0].actual_logprob, -0.5);
  EXPECT_EQ(positions[1].actual_id, 9);
  EXPECT_EQ(positions[1].top_id, 3);
  EXPECT_DOUBLE_EQ(positions[1].top_logprob, -0.2);
  EXPECT_DOUBLE_EQ(positions[1].actual_logprob, -2.0);
}

TEST(PromptPositions, PromptTokenIdsDecideWhenGiven) {
  const json list = json::array({nullptr, entry({{3, -0.2, 1}, {9, -2.0, 2}, {4, -2.5, 3}})});
  const json ids = json::array({1, 4});
  const auto positions = read_prompt_positions(list, &ids, "text");
  ASSERT_EQ(positions.size(), 1u);
  EXPECT_EQ(positions[0].actual_id, 4);
  EXPECT_EQ(positions[0].top_id, 3);
  EXPECT_DOUBLE_EQ(positions[0].actual_logprob, -2.5);
  const json wrong = json::array({1, 5});
  EXPECT_THROW(read_prompt_positions(list, &wrong, "text"), Error);
  const json short_ids = json::array({1});
  EXPECT_THROW(read_prompt_positions(list, &short_ids, "text"), Error);
}

TEST(PromptPositions, AmbiguousOrMalformedEntriesAreErrorsNamingThePosition) {
  const json three = json::array({nullptr, entry({{3, -0.2, 1}, {9, -2.0, 2}, {4, -2.5, 3}})});
  try {
    read_prompt_positions(three, nullptr, "corpus text 4");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corpus text 4: prompt_logprobs[1] has 3 entries"),
              std::string::npos)
        << e.what();
  }
  const json no_top = json::array({nullptr, entry({{3, -0.2, 2}})});
  EXPECT_THROW(read_prompt_positions(no_top, nullptr, "t"), Error);
  const json two_tops = json::array({nullptr, entry({{3, -0.2, 1}, {4, -0.2, 1}})});
  EXPECT_THROW(read_prompt_positions(two_tops, nullptr, "t"), Error);
  EXPECT_THROW(read_prompt_positions(json::array(), nullptr, "t"), Error);
  const json bad_key = json::array({nullptr, json{{"x", {{"logprob", -1.0}, {"rank", 1}}}}});
  EXPECT_THROW(read_prompt_positions(bad_key, nullptr, "t"), Error);
}

TEST(AgreementTally, CountsSameTopAndMeanLosses) {
  // Four positions; the servers rank the same token first at three of them.
  const std::vector<PromptPosition> a = {{5, -0.1, 5}, {6, -1.0, 2}, {7, -0.5, 7}, {8, -2.0, 1}};
  const std::vector<PromptPosition> b = {{5, -0.2, 5}, {6, -1.2, 2}, {7, -0.4, 3}, {8, -2.2, 1}};
  AgreementTally tally;
  tally.add(a, b, "text");
  EXPECT_EQ(tally.positions(), 4u);
  EXPECT_EQ(tally.same_top(), 3u);
  EXPECT_DOUBLE_EQ(tally.agreement(), 0.75);
  EXPECT_NEAR(tally.mean_loss_a(), (0.1 + 1.0 + 0.5 + 2.0) / 4, 1e-12);
  EXPECT_NEAR(tally.mean_loss_b(), (0.2 + 1.2 + 0.4 + 2.2) / 4, 1e-12);
  EXPECT_NEAR(tally.loss_delta(), 0.1, 1e-12);
  // A second text adds positions, not a second average.
  tally.add({{1, -3.0, 1}}, {{1, -3.0, 1}}, "text 2");
  EXPECT_EQ(tally.positions(), 5u);
  EXPECT_DOUBLE_EQ(tally.agreement(), 0.8);
}

TEST(AgreementTally, DifferentTokenizationIsAnError) {
  AgreementTally tally;
  EXPECT_THROW(tally.add({{1, -1.0, 1}}, {{2, -1.0, 1}}, "t"), Error);
  EXPECT_THROW(tally.add({{1, -1.0, 1}}, {}, "t"), Error);
  EXPECT_EQ(tally.positions(), 0u);
  EXPECT_EQ(tally.agreement(), 0.0);
}

TEST(AgreementTally, DecidedPositionsAreThoseEitherServerIsSureOf) {
  // Position 1: both flat (top prob 0.2 and 0.3): a disagreement there is noise, not counted.
  // Position 2: only b is sure (0.9) and they disagree: counted. Position 3: both sure, agree.
  const std::vector<PromptPosition> a = {
      {1, -1.6, 1, std::log(0.2)}, {2, -0.1, 2, std::log(0.45)}, {3, -0.1, 3, std::log(0.9)}};
  const std::vector<PromptPosition> b = {
      {1, -1.7, 9, std::log(0.3)}, {2, -2.0, 8, std::log(0.9)}, {3, -0.1, 3, std::log(0.95)}};
  AgreementTally tally;
  tally.add(a, b, "text");
  EXPECT_EQ(tally.positions(), 3u);
  EXPECT_EQ(tally.same_top(), 1u);
  EXPECT_EQ(tally.decided_positions(), 2u);
  EXPECT_EQ(tally.decided_same_top(), 1u);
  EXPECT_DOUBLE_EQ(tally.decided_agreement(), 0.5);
}

}  // namespace
}  // namespace minimax::gates
