// The task generators against docs/tiny_model_tasks.md: the spec's worked examples, the shapes of
// generated problems, and answers re-derived independently of the generator.
#include "gates/tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "base/error.h"

namespace minimax::gates {
namespace {

std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string::npos) return parts;
    start = at + separator.size();
  }
}

bool is_filler_word(const std::string& word) {
  for (const std::string& w : kFillerWords)
    if (w == word) return true;
  return false;
}

TEST(SplitMix64, MatchesTheReferenceSequence) {
  // splitmix64 from seed 0: the published first outputs of the reference C implementation.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(rng.next(), 0x06C45D188009454FULL);
}

TEST(SplitMix64, UniformStaysInItsInclusiveRange) {
  SplitMix64 rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t v = rng.uniform(-2, 2);
    ASSERT_GE(v, -2);
    ASSERT_LE(v, 2);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 5u);  // both ends are reachable
}

TEST(WordLists, HaveTheSpecSizes) {
  EXPECT_EQ(kFillerWords.size(), 32u);
  EXPECT_EQ(kFillerWords[31], "light");
  EXPECT_EQ(kKeys.size(), 16u);
  EXPECT_EQ(kCities.size(), 12u);
  EXPECT_EQ(kConditions.size(), 5u);
  EXPECT_EQ(kItems.size(), 12u);
}

TEST(Arithmetic, SpecExamples) {
  EXPECT_EQ(arithmetic_reasoning({47, 195, '+'}), "7+5+0=12, 4+9+1=14, 0+1+1=2.");
  EXPECT_EQ(arithmetic_result({47, 195, '+'}), 242);
  EXPECT_EQ(arithmetic_reasoning({502, 37, '-'}), "12-7-0=5, 10-3-1=6, 5-0-1=4.");
  EXPECT_EQ(arithmetic_result({502, 37, '-'}), 465);
  const ChatTask task = arithmetic_task({47, 195, '+'});
  EXPECT_EQ(task.user, "What is 47 + 195?");
  EXPECT_EQ(task.expected_content, "242");
  EXPECT_EQ(arithmetic_task({502, 37, '-'}).user, "What is 502 - 37?");
}

// Rebuilds the result from the reasoning's column steps: the last digit of each step's value,
// right to left, plus a final carry.
int64_t result_from_steps(const std::string& reasoning, char op) {
  EXPECT_EQ(reasoning.back(), '.');
  const std::vector<std::string> steps = split(reasoning.substr(0, reasoning.size() - 1), ", ");
  int64_t result = 0;
  int64_t scale = 1;
  int64_t last = 0;
  for (const std::string& step : steps) {
    last = std::stoll(step.substr(step.find('=') + 1));
    result += (op == '+' ? last % 10 : last) * scale;
    scale *= 10;
  }
  if (op == '+' && last >= 10) result += scale;  // the last column's carry
  return result;
}

TEST(Arithmetic, SeededProblemsFollowTheRulesAndTheirAnswersAreRight) {
  SplitMix64 rng(42);
  int additions = 0;
  for (int i = 0; i < 500; ++i) {
    const ArithmeticProblem p = make_arithmetic(rng);
    ASSERT_TRUE(p.op == '+' || p.op == '-');
    ASSERT_GE(p.a, 10);
    ASSERT_LE(p.a, 999);
    ASSERT_GE(p.b, 10);
    ASSERT_LE(p.b, 999);
    if (p.op == '-') {
      ASSERT_GE(p.a, p.b);
    }
    additions += p.op == '+';
    const ChatTask task = arithmetic_task(p);
    const int64_t expected = p.op == '+' ? p.a + p.b : p.a - p.b;
    ASSERT_EQ(task.expected_content, std::to_string(expected));
    ASSERT_EQ(result_from_steps(task.expected_reasoning, p.op), expected)
        << task.expected_reasoning;
    // One step per digit of the longer operand.
    const size_t digits = std::max(std::to_string(p.a).size(), std::to_string(p.b).size());
    ASSERT_EQ(split(task.expected_reasoning, ", ").size(), digits);
  }
  EXPECT_GT(additions, 200);
  EXPECT_LT(additions, 300);
}

TEST(Arithmetic, FixedSeedGivesFixedProblems) {
  SplitMix64 a(5), b(5), c(6);
  const ArithmeticProblem pa = make_arithmetic(a);
  const ArithmeticProblem pb = make_arithmetic(b);
  const ArithmeticProblem pc = make_arithmetic(c);
  EXPECT_EQ(arithmetic_task(pa).user, arithmetic_task(pb).user);
  EXPECT_NE(arithmetic_task(pa).user, arithmetic_task(pc).user);
}

TEST(Filler, SentencesHaveTheSpecShape) {
  SplitMix64 rng(3);
  const std::vector<std::string> sentences = filler(rng, 200);
  ASSERT_EQ(sentences.size(), 200u);
  for (const std::string& sentence : sentences) {
    ASSERT_EQ(sentence.back(), '.');
    std::vector<std::string> words = split(sentence.substr(0, sentence.size() - 1), " ");
    ASSERT_GE(words.size(), 5u);
    ASSERT_LE(words.size(), 10u);
    ASSERT_TRUE(std::isupper(static_cast<unsigned char>(words[0][0]))) << sentence;
    words[0][0] = static_cast<char>(std::tolower(static_cast<unsigned char>(words[0][0])));
    for (const std::string& word : words) ASSERT_TRUE(is_filler_word(word)) << word;
  }
}

TEST(Needles, DocumentPlacesEachNeedleAtItsDepth) {
  SplitMix64 rng(11);
  const std::vector<double> depths = {0.9, 0.1, 0.5};
  const NeedleDocument doc = make_needle_document(rng, 32, depths);
  ASSERT_EQ(doc.needles.size(), 3u);
  std::set<std::string> keys;
  const std::vector<std::string> sentences = split(doc.document, ". ");
  ASSERT_EQ(sentences.size(), 32u + 3u);
  for (size_t j = 0; j < 3; ++j) {
    const Needle& needle = doc.needles[j];
    keys.insert(needle.key);
    ASSERT_GE(needle.value, 1000);
    ASSERT_LE(needle.value, 9999);
    const std::string sentence =
        "The secret code for " + needle.key + " is " + std::to_string(needle.value);
    // Filler sentences before the needle = round(depth * S); needles never precede it here
    // because the depths differ.
    size_t filler_before = 0;
    bool found = false;
    for (const std::string& s : sentences) {
      std::string bare = s.back() == '.' ? s.substr(0, s.size() - 1) : s;
      if (bare == sentence) {
        found = true;
        break;
      }
      if (bare.rfind("The secret code", 0) != 0) ++filler_before;
    }
    ASSERT_TRUE(found) << needle.key;
    EXPECT_EQ(filler_before, static_cast<size_t>(std::nearbyint(depths[j] * 32)));
  }
  EXPECT_EQ(keys.size(), 3u);
  const ChatTask task = needle_task(doc, 1);
  EXPECT_EQ(task.user,
            doc.document + "\n\nWhat is the secret code for " + doc.needles[1].key + "?");
  EXPECT_EQ(task.expected_content, std::to_string(doc.needles[1].value));
}

TEST(Needles, DepthOneGoesAfterTheLastSentenceAndEqualDepthsKeepOrder) {
  SplitMix64 rng(2);
  const NeedleDocument end = make_needle_document(rng, 5, {1.0});
  EXPECT_TRUE(end.document.ends_with("The secret code for " + end.needles[0].key + " is " +
                                     std::to_string(end.needles[0].value) + "."));
  const NeedleDocument start = make_needle_document(rng, 5, {0.0, 0.0});
  const std::string first = "The secret code for " + start.needles[0].key;
  const std::string second = "The secret code for " + start.needles[1].key;
  EXPECT_EQ(start.document.find(first), 0u);
  EXPECT_LT(start.document.find(first), start.document.find(second));
}

TEST(Needles, RandomDocumentsStayInTheSpecRanges) {
  SplitMix64 rng(9);
  for (int i = 0; i < 100; ++i) {
    const NeedleDocument doc = make_random_needle_document(rng);
    ASSERT_GE(doc.sentences, 3);
    ASSERT_LE(doc.sentences, 64);
    ASSERT_GE(doc.needles.size(), 1u);
    ASSERT_LE(doc.needles.size(), 3u);
  }
  EXPECT_THROW(make_needle_document(rng, 8, {1.5}), Error);
  EXPECT_THROW(make_needle_document(rng, 0, {0.5}), Error);
}

TEST(CopyRecall, AnswersFollowFromTheMessage) {
  SplitMix64 rng(21);
  for (int i = 0; i < 100; ++i) {
    const ChatTask copy = make_copy(rng);
    ASSERT_EQ(copy.user, "Repeat exactly: " + copy.expected_content);
    const std::vector<std::string> words = split(copy.expected_content, " ");
    ASSERT_GE(words.size(), 3u);
    ASSERT_LE(words.size(), 12u);
    for (const std::string& w : words) ASSERT_TRUE(is_filler_word(w)) << w;

    const ChatTask recall = make_recall(rng);
    static const std::regex shape("Here is a list: (.*)\\. Which word comes right after (\\w+)\\?");
    std::smatch match;
    ASSERT_TRUE(std::regex_match(recall.user, match, shape)) << recall.user;
    const std::vector<std::string> list = split(match[1].str(), ", ");
    ASSERT_GE(list.size(), 4u);
    ASSERT_LE(list.size(), 8u);
    ASSERT_EQ(std::set<std::string>(list.begin(), list.end()).size(), list.size());
    const auto at = std::find(list.begin(), list.end(), match[2].str());
    ASSERT_NE(at, list.end());
    ASSERT_NE(at + 1, list.end());  // never the last word
    ASSERT_EQ(recall.expected_content, *(at + 1));
  }
}

TEST(Tools, DefinitionsAreTheSpecJsonInItsKeyOrder) {
  const std::string spec =
      R"([{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}}},)"
      R"( {"type": "function", "function": {"name": "get_price", "description": "Get the price of an item in dollars.", "parameters": {"type": "object", "properties": {"item": {"type": "string", "description": "Item name"}}, "required": ["item"]}}}])";
  EXPECT_EQ(tool_definitions().dump(), nlohmann::ordered_json::parse(spec).dump());
}

TEST(Tools, ResultAndAnswerTextsAreExact) {
  ToolProblem weather;
  weather.weather = true;
  weather.city = "Paris";
  weather.temperature = -5;
  weather.condition = "rainy";
  EXPECT_EQ(tool_user_message(weather), "What is the weather in Paris?");
  EXPECT_EQ(expected_tool_name(weather), "get_weather");
  EXPECT_EQ(expected_tool_arguments(weather), nlohmann::json({{"city", "Paris"}}));
  EXPECT_EQ(tool_result(weather), R"({"city": "Paris", "temperature": -5, "condition": "rainy"})");
  EXPECT_EQ(tool_final_answer(weather), "It is rainy and -5 degrees in Paris.");

  ToolProblem price;
  price.weather = false;
  price.item = "lamp";
  price.price = 42;
  EXPECT_EQ(tool_user_message(price), "How much does a lamp cost?");
  EXPECT_EQ(expected_tool_name(price), "get_price");
  EXPECT_EQ(tool_result(price), R"({"item": "lamp", "price": 42})");
  EXPECT_EQ(tool_final_answer(price), "A lamp costs 42 dollars.");
}

TEST(Tools, SeededProblemsStayInRangeAndResultsParse) {
  SplitMix64 rng(4);
  for (int i = 0; i < 200; ++i) {
    const ToolProblem p = make_tool_problem(rng);
    const nlohmann::json result = nlohmann::json::parse(tool_result(p));
    if (p.weather) {
      ASSERT_GE(p.temperature, -10);
      ASSERT_LE(p.temperature, 40);
      ASSERT_EQ(result["temperature"], p.temperature);
      ASSERT_EQ(result["city"], p.city);
    } else {
      ASSERT_GE(p.price, 1);
      ASSERT_LE(p.price, 999);
      ASSERT_EQ(result["price"], p.price);
    }
  }
  EXPECT_TRUE(make_tool_problem(rng, true).weather);
  EXPECT_FALSE(make_tool_problem(rng, false).weather);
}

TEST(Golden, FixedAndCoversEveryChatTask) {
  const std::vector<ChatTask> a = golden_tasks();
  const std::vector<ChatTask> b = golden_tasks();
  ASSERT_EQ(a.size(), b.size());
  std::map<std::string, int> kinds;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].user, b[i].user);
    EXPECT_EQ(a[i].expected_content, b[i].expected_content);
    EXPECT_FALSE(a[i].expected_content.empty());
    ++kinds[a[i].kind];
  }
  EXPECT_EQ(kinds["arithmetic"], 3);
  EXPECT_EQ(kinds["needles"], 3);
  EXPECT_EQ(kinds["copy"], 2);
  EXPECT_EQ(kinds["recall"], 2);
}

// Problems from the same seeds by the training data's own generator (tools/tiny_model/tasks.py,
// an independent Python implementation of the spec; printed once and copied here): the C++
// generators draw in the same order, so a seed names the same problem in both.
TEST(CrossCheck, SameSeedsGiveTasksPysProblems) {
  {
    SplitMix64 rng(1);
    const ChatTask t = arithmetic_task(make_arithmetic(rng));
    EXPECT_EQ(t.user, "What is 670 - 359?");
    EXPECT_EQ(t.expected_reasoning, "10-9-0=1, 7-5-1=1, 6-3-0=3.");
    EXPECT_EQ(t.expected_content, "311");
  }
  {
    SplitMix64 rng(1);
    EXPECT_EQ(make_copy(rng).user, "Repeat exactly: river slowly bird sky the near tall and");
  }
  {
    SplitMix64 rng(1);
    const ChatTask t = make_recall(rng);
    EXPECT_EQ(t.user,
              "Here is a list: harbor, orange, lemon, jungle. Which word comes right after lemon?");
    EXPECT_EQ(t.expected_content, "jungle");
  }
  {
    SplitMix64 rng(2);
    const ToolProblem p = make_tool_problem(rng);
    EXPECT_EQ(tool_user_message(p), "What is the weather in Tokyo?");
    EXPECT_EQ(tool_result(p), R"({"city": "Tokyo", "temperature": -1, "condition": "cloudy"})");
  }
  {
    SplitMix64 rng(2);
    const NeedleDocument doc = make_random_needle_document(rng);
    const ChatTask t = needle_task(doc, rng.below(doc.needles.size()));
    EXPECT_EQ(t.user.substr(0, 120),
              "The secret code for eagle is 2862. Sings tall under small quiet moves sky wind. "
              "Wind tall small road soft. Stands wind q");
    EXPECT_EQ(t.user.size(), 1439u);
    EXPECT_EQ(t.expected_content, "4219");
  }
}

}  // namespace
}  // namespace minimax::gates
