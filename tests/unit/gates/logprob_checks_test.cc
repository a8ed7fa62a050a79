// The logprob validators on hand-made replies: the good ones pass and each bad one fails for its
// own reason.
#include "gates/logprob_checks.h"

#include <gtest/gtest.h>

#include <cmath>

namespace minimax::gates {
namespace {

using json = nlohmann::json;

json good_choice() {
  return json::parse(R"({
    "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "242"},
    "logprobs": {"content": [
      {"token": "24", "logprob": -0.01, "bytes": [50, 52],
       "top_logprobs": [{"token": "24", "logprob": -0.01, "bytes": null},
                        {"token": "2", "logprob": -4.7, "bytes": null},
                        {"token": "25", "logprob": -6.0, "bytes": null}]},
      {"token": "2", "logprob": -0.2,
       "top_logprobs": [{"token": "2", "logprob": -0.2},
                        {"token": "3", "logprob": -1.8},
                        {"token": "1", "logprob": -9999.0}]}
    ]}})");
}

LogprobCheckOptions chat_options() {
  LogprobCheckOptions options;
  options.top_logprobs = 3;
  options.greedy = true;
  options.expected_count = 2;
  return options;
}

// True when some problem contains `needle`.
bool mentions(const std::vector<std::string>& problems, const std::string& needle) {
  for (const std::string& p : problems)
    if (p.find(needle) != std::string::npos) return true;
  return false;
}

TEST(ChatLogprobs, GoodReplyPasses) {
  EXPECT_EQ(check_chat_logprobs(good_choice(), chat_options()), std::vector<std::string>{});
}

TEST(ChatLogprobs, MissingLogprobs) {
  json choice = good_choice();
  choice.erase("logprobs");
  const auto problems = check_chat_logprobs(choice, chat_options());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(mentions(problems, "choices[0].logprobs is missing"));
  choice["logprobs"] = {{"content", json::array()}};
  EXPECT_TRUE(mentions(check_chat_logprobs(choice, chat_options()), "empty"));
}

TEST(ChatLogprobs, PositiveAndNonFiniteLogprobs) {
  json choice = good_choice();
  choice["logprobs"]["content"][0]["logprob"] = 0.5;
  EXPECT_TRUE(
      mentions(check_chat_logprobs(choice, chat_options()), "content[0].logprob is positive"));
  choice = good_choice();
  choice["logprobs"]["content"][1]["top_logprobs"][1]["logprob"] = NAN;
  EXPECT_TRUE(mentions(check_chat_logprobs(choice, chat_options()),
                       "content[1].top_logprobs[1].logprob is not finite"));
  choice = good_choice();
  choice["logprobs"]["content"][1]["logprob"] = "-0.2";
  EXPECT_TRUE(mentions(check_chat_logprobs(choice, chat_options()),
                       "content[1].logprob is missing or not a number"));
}

TEST(ChatLogprobs, UnsortedTopList) {
  json choice = good_choice();
  std::swap(choice["logprobs"]["content"][0]["top_logprobs"][1],
            choice["logprobs"]["content"][0]["top_logprobs"][2]);
  const auto problems = check_chat_logprobs(choice, chat_options());
  ASSERT_EQ(problems.size(), 1u) << problems[0];
  EXPECT_TRUE(mentions(problems, "content[0].top_logprobs not sorted descending"));
}

TEST(ChatLogprobs, ChosenTokenDisagreesWithItsTopEntry) {
  json choice = good_choice();
  choice["logprobs"]["content"][1]["logprob"] = -0.3;  // its top entry says -0.2
  const auto problems = check_chat_logprobs(choice, chat_options());
  EXPECT_TRUE(mentions(problems, "content[1].logprob -0.3 differs from its top_logprobs[0]"));
}

TEST(ChatLogprobs, GreedyChoiceBelowTopOne) {
  json choice = good_choice();
  // The reply claims it sampled "3" although "2" ranks first: wrong for temperature 0.
  choice["logprobs"]["content"][1]["token"] = "3";
  choice["logprobs"]["content"][1]["logprob"] = -1.8;
  const auto problems = check_chat_logprobs(choice, chat_options());
  ASSERT_EQ(problems.size(), 1u) << problems[0];
  EXPECT_TRUE(mentions(problems, "greedy decode chose a token with logprob -1.8"));
  LogprobCheckOptions sampled = chat_options();
  sampled.greedy = false;
  EXPECT_TRUE(check_chat_logprobs(choice, sampled).empty());
}

TEST(ChatLogprobs, CountAndTopSizeMismatch) {
  LogprobCheckOptions options = chat_options();
  options.expected_count = 3;
  EXPECT_TRUE(mentions(check_chat_logprobs(good_choice(), options),
                       "has 2 entries but usage.completion_tokens is 3"));
  options = chat_options();
  options.top_logprobs = 2;
  EXPECT_TRUE(mentions(check_chat_logprobs(good_choice(), options),
                       "top_logprobs has 3 entries, requested 2"));
  json choice = good_choice();
  choice["logprobs"]["content"][0].erase("top_logprobs");
  EXPECT_TRUE(
      mentions(check_chat_logprobs(choice, chat_options()), "content[0].top_logprobs is missing"));
}

TEST(ChatLogprobs, SameTextDifferentBytesIsNotTheChosenToken) {
  // Two byte tokens that both print as U+FFFD: only bytes tell them apart.
  json choice = json::parse(R"({"logprobs": {"content": [
      {"token": "\ufffd", "logprob": -0.7, "bytes": [226],
       "top_logprobs": [{"token": "\ufffd", "logprob": -0.7, "bytes": [226]},
                        {"token": "\ufffd", "logprob": -1.2, "bytes": [227]}]}]}})");
  LogprobCheckOptions options;
  options.top_logprobs = 2;
  EXPECT_TRUE(check_chat_logprobs(choice, options).empty());
  choice["logprobs"]["content"][0]["top_logprobs"][1]["bytes"] = {226};  // now it claims the same
  EXPECT_TRUE(mentions(check_chat_logprobs(choice, options), "differs from its top_logprobs[1]"));
}

json good_prompt_reply() {
  return json::parse(R"({
    "object": "text_completion",
    "choices": [{"index": 0, "text": "x", "finish_reason": "length"}],
    "prompt_logprobs": [
      null,
      {"17": {"logprob": -2.5, "rank": 3, "decoded_token": " the"},
       "5": {"logprob": -0.4, "rank": 1, "decoded_token": " a"}},
      {"9": {"logprob": -0.1, "rank": 1, "decoded_token": "."}}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})");
}

LogprobCheckOptions prompt_options() {
  LogprobCheckOptions options;
  options.top_logprobs = 1;
  options.expected_count = 3;
  return options;
}

TEST(PromptLogprobs, GoodReplyPassesAtTopLevelAndInTheChoice) {
  EXPECT_EQ(check_prompt_logprobs(good_prompt_reply(), prompt_options()),
            std::vector<std::string>{});
  json reply = good_prompt_reply();
  reply["choices"][0]["prompt_logprobs"] = reply["prompt_logprobs"];
  reply.erase("prompt_logprobs");
  EXPECT_EQ(check_prompt_logprobs(reply, prompt_options()), std::vector<std::string>{});
}

TEST(PromptLogprobs, MissingOrFirstNotNull) {
  json reply = good_prompt_reply();
  reply.erase("prompt_logprobs");
  EXPECT_TRUE(
      mentions(check_prompt_logprobs(reply, prompt_options()), "prompt_logprobs is missing"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][0] = reply["prompt_logprobs"][2];
  const auto problems = check_prompt_logprobs(reply, prompt_options());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(mentions(problems, "prompt_logprobs[0] is not null"));
}

TEST(PromptLogprobs, NotOneEntryPerPromptToken) {
  json reply = good_prompt_reply();
  reply["prompt_logprobs"].erase(2);
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "has 2 entries but usage.prompt_tokens is 3"));
}

TEST(PromptLogprobs, BadEntries) {
  json reply = good_prompt_reply();
  reply["prompt_logprobs"][2]["9"]["logprob"] = 0.3;
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "prompt_logprobs[2][\"9\"].logprob is positive"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][1]["5"]["rank"] = 2;  // then nothing ranks first
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "prompt_logprobs[1] has no rank-1 entry"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][1]["17"]["logprob"] = -0.1;  // rank 3 above rank 1
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "rank 3 has logprob -0.1 above a better rank's -0.4"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][2]["abc"] = {{"logprob", -3.0}, {"rank", 2}, {"decoded_token", "q"}};
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()), "key is not a token id"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][1]["8"] = {{"logprob", -3.0}, {"rank", 4}, {"decoded_token", "q"}};
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "prompt_logprobs[1] has 3 entries, at most 2 expected"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][2] = json::object();
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "prompt_logprobs[2] is not a non-empty object"));
  reply = good_prompt_reply();
  reply["prompt_logprobs"][2]["9"].erase("rank");
  EXPECT_TRUE(mentions(check_prompt_logprobs(reply, prompt_options()),
                       "prompt_logprobs[2][\"9\"].rank is missing"));
}

}  // namespace
}  // namespace minimax::gates
