// Generators of the tiny model's tasks (docs/tiny_model_tasks.md) and their computed answers.
#include "gates/tasks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace minimax::gates {

const std::vector<std::string> kFillerWords = {
    "the",    "small", "green",    "house", "stands",  "near", "old",    "river",
    "and",    "every", "morning",  "bird",  "sings",   "over", "quiet",  "field",
    "while",  "soft",  "wind",     "moves", "through", "tall", "grass",  "under",
    "bright", "sky",   "children", "walk",  "along",   "road", "slowly", "light"};
const std::vector<std::string> kKeys = {"apple",  "banana", "cherry", "dragon", "eagle",  "forest",
                                        "garden", "harbor", "island", "jungle", "kettle", "lemon",
                                        "mirror", "needle", "orange", "pepper"};
const std::vector<std::string> kCities = {"Paris", "London", "Tokyo", "Berlin", "Madrid", "Rome",
                                          "Cairo", "Lima",   "Oslo",  "Delhi",  "Seoul",  "Sydney"};
const std::vector<std::string> kConditions = {"sunny", "cloudy", "rainy", "snowy", "windy"};
const std::vector<std::string> kItems = {"book",   "lamp",   "chair",  "phone",
                                         "watch",  "ticket", "bottle", "pencil",
                                         "guitar", "camera", "jacket", "candle"};

uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t SplitMix64::below(uint64_t n) {
  if (n == 0) fail("SplitMix64::below: n must be positive");
  return next() % n;
}

int64_t SplitMix64::uniform(int64_t lo, int64_t hi) {
  if (hi < lo) fail("SplitMix64::uniform: empty range [{}, {}]", lo, hi);
  return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
}

namespace {

const std::string& pick(SplitMix64& rng, const std::vector<std::string>& words) {
  return words[rng.below(words.size())];
}

// `count` distinct picks in the order drawn, by rejection as tools/tiny_model/tasks.py does, so
// a seed gives the same words there and here.
std::vector<std::string> distinct(SplitMix64& rng, const std::vector<std::string>& words,
                                  size_t count) {
  std::vector<std::string> picked;
  while (picked.size() < count) {
    const std::string& word = pick(rng, words);
    if (std::find(picked.begin(), picked.end(), word) == picked.end()) picked.push_back(word);
  }
  return picked;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

// Digit i from the right, 0 past the number's length.
int64_t digit(int64_t number, size_t i) {
  for (size_t k = 0; k < i; ++k) number /= 10;
  return number % 10;
}

size_t digit_count(int64_t number) { return std::to_string(number).size(); }

}  // namespace

ArithmeticProblem make_arithmetic(SplitMix64& rng) {
  ArithmeticProblem problem;
  problem.op = rng.below(2) == 0 ? '+' : '-';
  problem.a = rng.uniform(10, 999);
  problem.b = rng.uniform(10, 999);
  if (problem.op == '-' && problem.a < problem.b) std::swap(problem.a, problem.b);
  return problem;
}

int64_t arithmetic_result(const ArithmeticProblem& problem) {
  return problem.op == '+' ? problem.a + problem.b : problem.a - problem.b;
}

std::string arithmetic_reasoning(const ArithmeticProblem& problem) {
  const size_t n = std::max(digit_count(problem.a), digit_count(problem.b));
  std::vector<std::string> steps;
  int64_t carry = 0;  // the carry of an addition, the borrow of a subtraction
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = digit(problem.a, i);
    const int64_t b = digit(problem.b, i);
    if (problem.op == '+') {
      const int64_t sum = a + b + carry;
      steps.push_back(fmt::format("{}+{}+{}={}", a, b, carry, sum));
      carry = sum / 10;
    } else if (a - b - carry >= 0) {
      steps.push_back(fmt::format("{}-{}-{}={}", a, b, carry, a - b - carry));
      carry = 0;
    } else {
      steps.push_back(fmt::format("{}-{}-{}={}", a + 10, b, carry, a + 10 - b - carry));
      carry = 1;
    }
  }
  return join(steps, ", ") + ".";
}

ChatTask arithmetic_task(const ArithmeticProblem& problem) {
  return {"arithmetic", fmt::format("What is {} {} {}?", problem.a, problem.op, problem.b),
          std::to_string(arithmetic_result(problem)), arithmetic_reasoning(problem)};
}

std::vector<std::string> filler(SplitMix64& rng, int sentences) {
  std::vector<std::string> out;
  for (int s = 0; s < sentences; ++s) {
    const int64_t length = 5 + static_cast<int64_t>(rng.below(6));
    std::vector<std::string> words;
    for (int64_t w = 0; w < length; ++w) words.push_back(pick(rng, kFillerWords));
    words[0][0] = static_cast<char>(std::toupper(static_cast<unsigned char>(words[0][0])));
    out.push_back(join(words, " ") + ".");
  }
  return out;
}

namespace {

// Keys, values and filler are drawn in tools/tiny_model/tasks.py's order; the depths come from
// `depth_of(j)` after them (fixed ones, or drawn from the generator as the Python one does).
template <typename DepthOf>
NeedleDocument build_needle_document(SplitMix64& rng, int sentences, size_t count,
                                     DepthOf depth_of) {
  if (sentences < 1) fail("needle document: sentences must be >= 1, got {}", sentences);
  if (count < 1 || count > kKeys.size())
    fail("needle document: needs 1..{} needles, got {}", kKeys.size(), count);
  NeedleDocument doc;
  doc.sentences = sentences;
  const std::vector<std::string> keys = distinct(rng, kKeys, count);
  for (size_t j = 0; j < count; ++j) doc.needles.push_back({keys[j], rng.uniform(1000, 9999), 0.0});
  const std::vector<std::string> text = filler(rng, sentences);
  for (size_t j = 0; j < count; ++j) {
    doc.needles[j].depth = depth_of(j);
    if (doc.needles[j].depth < 0.0 || doc.needles[j].depth > 1.0)
      fail("needle document: depth {} is outside [0, 1]", doc.needles[j].depth);
  }
  // Needle j goes before filler sentence round(d_j * S), rounding half to even like Python's
  // round(); needles at the same position keep their order.
  std::vector<std::string> parts;
  for (int s = 0; s <= sentences; ++s) {
    for (const Needle& needle : doc.needles)
      if (static_cast<int>(std::nearbyint(needle.depth * sentences)) == s)
        parts.push_back(fmt::format("The secret code for {} is {}.", needle.key, needle.value));
    if (s < sentences) parts.push_back(text[static_cast<size_t>(s)]);
  }
  doc.document = join(parts, " ");
  return doc;
}

}  // namespace

NeedleDocument make_needle_document(SplitMix64& rng, int sentences,
                                    const std::vector<double>& depths) {
  return build_needle_document(rng, sentences, depths.size(), [&](size_t j) { return depths[j]; });
}

NeedleDocument make_random_needle_document(SplitMix64& rng) {
  const int sentences = static_cast<int>(rng.uniform(3, 64));
  const size_t count = static_cast<size_t>(rng.uniform(1, 3));
  return build_needle_document(rng, sentences, count, [&](size_t) {
    return static_cast<double>(rng.below(1000001)) / 1000000.0;  // tasks.py's real()
  });
}

ChatTask needle_task(const NeedleDocument& document, size_t asked) {
  if (asked >= document.needles.size())
    fail("needle task: asked needle {} of {}", asked, document.needles.size());
  const Needle& needle = document.needles[asked];
  return {"needles",
          fmt::format("{}\n\nWhat is the secret code for {}?", document.document, needle.key),
          std::to_string(needle.value), ""};
}

ChatTask make_copy(SplitMix64& rng) {
  const int64_t count = rng.uniform(3, 12);
  std::vector<std::string> words;
  for (int64_t i = 0; i < count; ++i) words.push_back(pick(rng, kFillerWords));
  const std::string text = join(words, " ");
  return {"copy", "Repeat exactly: " + text, text, ""};
}

ChatTask make_recall(SplitMix64& rng) {
  const size_t count = static_cast<size_t>(rng.uniform(4, 8));
  const std::vector<std::string> words = distinct(rng, kKeys, count);
  const size_t i = static_cast<size_t>(rng.uniform(1, static_cast<int64_t>(count) - 1));
  return {"recall",
          fmt::format("Here is a list: {}. Which word comes right after {}?", join(words, ", "),
                      words[i - 1]),
          words[i], ""};
}

ToolProblem make_tool_problem(SplitMix64& rng) {
  const bool weather = rng.below(2) == 0;
  return make_tool_problem(rng, weather);
}

ToolProblem make_tool_problem(SplitMix64& rng, bool weather) {
  ToolProblem problem;
  problem.weather = weather;
  if (weather) {
    problem.city = pick(rng, kCities);
    problem.temperature = rng.uniform(-10, 40);
    problem.condition = pick(rng, kConditions);
  } else {
    problem.item = pick(rng, kItems);
    problem.price = rng.uniform(1, 999);
  }
  return problem;
}

nlohmann::ordered_json tool_definitions() {
  using ojson = nlohmann::ordered_json;
  auto tool = [](const char* name, const char* description, const char* parameter,
                 const char* parameter_description) {
    ojson property = {{"type", "string"}, {"description", parameter_description}};
    ojson parameters = {{"type", "object"},
                        {"properties", {{parameter, property}}},
                        {"required", ojson::array({parameter})}};
    ojson function = {
        {"name", name}, {"description", description}, {"parameters", std::move(parameters)}};
    return ojson{{"type", "function"}, {"function", std::move(function)}};
  };
  return ojson::array(
      {tool("get_weather", "Get the current weather in a city.", "city", "City name"),
       tool("get_price", "Get the price of an item in dollars.", "item", "Item name")});
}

std::string tool_user_message(const ToolProblem& problem) {
  return problem.weather ? fmt::format("What is the weather in {}?", problem.city)
                         : fmt::format("How much does a {} cost?", problem.item);
}

std::string expected_tool_name(const ToolProblem& problem) {
  return problem.weather ? "get_weather" : "get_price";
}

nlohmann::json expected_tool_arguments(const ToolProblem& problem) {
  return problem.weather ? nlohmann::json{{"city", problem.city}}
                         : nlohmann::json{{"item", problem.item}};
}

std::string tool_result(const ToolProblem& problem) {
  // Written out rather than dumped: json.dumps puts ", " and ": " between members.
  if (problem.weather)
    return fmt::format(R"({{"city": "{}", "temperature": {}, "condition": "{}"}})", problem.city,
                       problem.temperature, problem.condition);
  return fmt::format(R"({{"item": "{}", "price": {}}})", problem.item, problem.price);
}

std::string tool_final_answer(const ToolProblem& problem) {
  if (problem.weather)
    return fmt::format("It is {} and {} degrees in {}.", problem.condition, problem.temperature,
                       problem.city);
  return fmt::format("A {} costs {} dollars.", problem.item, problem.price);
}

std::vector<ChatTask> golden_tasks() {
  // Fixed seeds, one stream per task kind, so adding a kind never changes another's problems.
  std::vector<ChatTask> tasks;
  SplitMix64 arithmetic(0x601D0001);
  for (int i = 0; i < 3; ++i) tasks.push_back(arithmetic_task(make_arithmetic(arithmetic)));
  SplitMix64 needles(0x601D0002);
  const std::vector<std::vector<double>> depths = {{0.5}, {0.1, 0.9}, {0.9, 0.5, 0.1}};
  const int lengths[] = {8, 32, 64};
  for (size_t i = 0; i < depths.size(); ++i) {
    const NeedleDocument document = make_needle_document(needles, lengths[i], depths[i]);
    tasks.push_back(needle_task(document, i % document.needles.size()));
  }
  SplitMix64 copy(0x601D0003);
  for (int i = 0; i < 2; ++i) tasks.push_back(make_copy(copy));
  SplitMix64 recall(0x601D0004);
  for (int i = 0; i < 2; ++i) tasks.push_back(make_recall(recall));
  return tasks;
}

}  // namespace minimax::gates
