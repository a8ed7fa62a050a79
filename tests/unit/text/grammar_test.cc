// The grammar engine: building (left recursion refused), the lazily built automaton, the regex
// subset, and token masks, which must equal a token-by-token check on every vocabulary tried.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>

#include "base/error.h"
#include "text/grammar/grammar_matcher.h"
#include "text/grammar/regex_grammar.h"

namespace minimax {
namespace {

using ::testing::HasSubstr;

// Whether the automaton of `grammar` accepts exactly `text`.
bool accepts(const std::shared_ptr<const Grammar>& grammar, std::string_view text) {
  GrammarAutomaton a(grammar);
  int32_t s = a.start();
  for (char c : text) {
    s = a.next(s, static_cast<uint8_t>(c));
    if (s == GrammarAutomaton::kDead) return false;
  }
  return a.accepting(s);
}

std::shared_ptr<const Grammar> regex_grammar(std::string_view pattern, bool json = false) {
  GrammarBuilder b;
  TextEncoding encoding;
  encoding.json_escape = json;
  const int32_t root = regex_rule(b, pattern, encoding);
  return std::make_shared<const Grammar>(b.build(root));
}

TEST(Grammar, LiteralsRepeatsAndChoices) {
  GrammarBuilder b;
  const int32_t digits = b.repeat("d", {b.byte_range('0', '9')}, 1, 3);
  const int32_t word = b.plus("w", {b.byte_range('a', 'z')});
  const int32_t root = b.choice("root", {concat(b.literal("n="), {GrammarBuilder::ref(digits)}),
                                         concat(b.literal("w="), {GrammarBuilder::ref(word)})});
  auto g = std::make_shared<const Grammar>(b.build(root));
  EXPECT_TRUE(accepts(g, "n=1"));
  EXPECT_TRUE(accepts(g, "n=123"));
  EXPECT_FALSE(accepts(g, "n=1234"));
  EXPECT_FALSE(accepts(g, "n="));
  EXPECT_TRUE(accepts(g, "w=abc"));
  EXPECT_FALSE(accepts(g, "w=abC"));
  EXPECT_FALSE(accepts(g, "w=ab "));
}

// element{min,max} the way it was built before repetitions were counted: min copies, then
// max - min nested optionals (or a star when max < 0).
int32_t unrolled_repeat(GrammarBuilder& b, const ElementSequence& element, int min, int max) {
  ElementSequence sequence;
  for (int i = 0; i < min; ++i) sequence = concat(std::move(sequence), element);
  if (max < 0) {
    sequence.push_back(GrammarBuilder::ref(b.star("star", element)));
  } else if (max > min) {
    int32_t tail = b.optional("opt", element);
    for (int i = min + 1; i < max; ++i)
      tail = b.optional("opt", concat(element, {GrammarBuilder::ref(tail)}));
    sequence.push_back(GrammarBuilder::ref(tail));
  }
  return b.choice("unrolled", {std::move(sequence)});
}

// Every string over {a, b, c} up to `length`.
std::vector<std::string> all_strings(int length) {
  std::vector<std::string> out{""};
  for (size_t i = 0; i < out.size(); ++i)
    if (static_cast<int>(out[i].size()) < length)
      for (char c : {'a', 'b', 'c'}) out.push_back(out[i] + c);
  return out;
}

TEST(Grammar, CountedRepeatsAcceptWhatUnrolledOnesDo) {
  // Bodies: one byte, a choice of two lengths, a nullable one, and a counted repeat itself.
  using Body = std::function<ElementSequence(GrammarBuilder&)>;
  const std::vector<Body> bodies = {
      [](GrammarBuilder& b) { return b.literal("a"); },
      [](GrammarBuilder& b) {
        return ElementSequence{
            GrammarBuilder::ref(b.choice("ab|c", {b.literal("ab"), b.literal("c")}))};
      },
      [](GrammarBuilder& b) {
        return ElementSequence{GrammarBuilder::ref(b.optional("a?", b.literal("a"))), b.byte('b')};
      },
      [](GrammarBuilder& b) {
        return ElementSequence{GrammarBuilder::ref(b.optional("c?", b.literal("c")))};
      },
      [](GrammarBuilder& b) {
        return ElementSequence{GrammarBuilder::ref(b.repeat("a{1,2}", b.literal("a"), 1, 2))};
      },
  };
  const std::vector<std::string> texts = all_strings(8);
  for (size_t k = 0; k < bodies.size(); ++k)
    for (auto [min, max] : std::vector<std::pair<int, int>>{
             {0, 0}, {0, 1}, {1, 1}, {2, 2}, {0, 3}, {2, 5}, {3, -1}, {0, -1}, {1, -1}}) {
      SCOPED_TRACE(::testing::Message() << "body " << k << " {" << min << "," << max << "}");
      GrammarBuilder counted_builder, unrolled_builder;
      const int32_t counted_root = counted_builder.choice(
          "root", {concat(concat({counted_builder.byte('[')},
                                 {GrammarBuilder::ref(counted_builder.repeat(
                                     "r", bodies[k](counted_builder), min, max))}),
                          {counted_builder.byte(']')})});
      const int32_t unrolled_root = unrolled_builder.choice(
          "root", {concat(concat({unrolled_builder.byte('[')},
                                 {GrammarBuilder::ref(unrolled_repeat(
                                     unrolled_builder, bodies[k](unrolled_builder), min, max))}),
                          {unrolled_builder.byte(']')})});
      GrammarAutomaton counted(
          std::make_shared<const Grammar>(counted_builder.build(counted_root)));
      std::optional<GrammarAutomaton> unrolled;
      try {
        unrolled.emplace(std::make_shared<const Grammar>(unrolled_builder.build(unrolled_root)));
      } catch (const Error&) {
        // A star over a nullable body is left-recursive, which unrolling could not build; the
        // counted element has no such limit.
        ASSERT_LT(max, 0);
        continue;
      }
      auto run = [](GrammarAutomaton& a, const std::string& text) {
        int32_t s = a.start();
        for (char c : text)
          if (s != GrammarAutomaton::kDead) s = a.next(s, static_cast<uint8_t>(c));
        return s != GrammarAutomaton::kDead && a.accepting(s);
      };
      int accepted = 0;
      for (const std::string& t : texts) {
        const std::string text = "[" + t + "]";
        const bool yes = run(counted, text);
        ASSERT_EQ(yes, run(*unrolled, text)) << text;
        accepted += yes;
      }
      EXPECT_GT(accepted, 0);
    }
}

TEST(Grammar, LeftRecursionIsRefused) {
  GrammarBuilder b;
  const int32_t a = b.new_rule("a");
  const int32_t opt = b.optional("o", {b.byte('x')});
  b.add_alternative(a, {GrammarBuilder::ref(opt), GrammarBuilder::ref(a), b.byte('y')});
  b.add_alternative(a, {b.byte('z')});
  EXPECT_THROW(
      {
        try {
          b.build(a);
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("left-recursive"));
          throw;
        }
      },
      Error);
}

TEST(Grammar, RightRecursionDoesNotGrowTheAutomaton) {
  GrammarBuilder b;
  const int32_t root = b.star("s", b.literal("ab"));
  GrammarAutomaton a(std::make_shared<const Grammar>(b.build(root)));
  int32_t s = a.start();
  for (int i = 0; i < 1000; ++i) s = a.next(a.next(s, 'a'), 'b');
  EXPECT_TRUE(a.accepting(s));
  EXPECT_LE(a.state_count(), 3u);  // start, after a, after ab (= start or one more)
}

TEST(Grammar, NestingGrowsAndShrinks) {
  // p ::= "(" p ")" | "" — balanced parentheses, which no finite automaton can hold.
  GrammarBuilder b;
  const int32_t p = b.new_rule("p");
  b.add_alternative(p, {b.byte('('), GrammarBuilder::ref(p), b.byte(')')});
  b.add_alternative(p, {});
  auto g = std::make_shared<const Grammar>(b.build(p));
  EXPECT_TRUE(accepts(g, std::string(50, '(') + std::string(50, ')')));
  EXPECT_FALSE(accepts(g, std::string(50, '(') + std::string(49, ')')));
  EXPECT_FALSE(accepts(g, "())"));
}

TEST(RegexGrammar, Subset) {
  EXPECT_TRUE(accepts(regex_grammar("^[a-c]+\\d{2}$"), "abca12"));
  EXPECT_FALSE(accepts(regex_grammar("^[a-c]+\\d{2}$"), "abd12"));
  EXPECT_FALSE(accepts(regex_grammar("^[a-c]+\\d{2}$"), "a123"));
  EXPECT_TRUE(accepts(regex_grammar("^(cat|dog)s?$"), "dogs"));
  EXPECT_FALSE(accepts(regex_grammar("^(cat|dog)s?$"), "cow"));
  EXPECT_TRUE(accepts(regex_grammar("^[^0-9]*$"), "héllo"));  // a negated class takes UTF-8
  EXPECT_FALSE(accepts(regex_grammar("^[^0-9]*$"), "h3"));
  EXPECT_TRUE(accepts(regex_grammar("^é.\\.$"), "éx."));
  EXPECT_FALSE(accepts(regex_grammar("^a.b$"), "a\nb"));
  // Unanchored: the match may be anywhere.
  EXPECT_TRUE(accepts(regex_grammar("id-\\d"), "my id-7 here"));
  EXPECT_FALSE(accepts(regex_grammar("id-\\d"), "my id-x"));
  EXPECT_TRUE(accepts(regex_grammar("^x{2,}$"), "xxxxx"));
  EXPECT_FALSE(accepts(regex_grammar("^x{2,}$"), "x"));
}

TEST(RegexGrammar, JsonEncodingEscapesQuotesAndBackslashes) {
  auto g = regex_grammar("^a\"b\\\\c$", /*json=*/true);  // the string a"b\c
  EXPECT_TRUE(accepts(g, "a\\\"b\\\\c"));
  EXPECT_FALSE(accepts(g, "a\"b\\c"));
}

TEST(RegexGrammar, UnsupportedSyntaxNamesTheOffset) {
  for (const char* pattern : {"(?=a)", "\\bword", "(a)\\1", "a^b", "[z-a]", "a{3,2}", "x{5000}"}) {
    GrammarBuilder b;
    EXPECT_THROW(regex_rule(b, pattern, TextEncoding{}), Error) << pattern;
  }
  GrammarBuilder b;
  try {
    regex_rule(b, "ab(?<name>c)", TextEncoding{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("offset 3"));
  }
}

TEST(RegexGrammar, ARepetitionCutOffAfterItsCommaIsNotReadPastThePattern) {
  // Found by tests/fuzz/regex_grammar_fuzz.cc: the upper bound was read one byte past "x{2,".
  const std::string text = "x{2,9}";
  GrammarBuilder b;
  try {
    regex_rule(b, std::string_view(text).substr(0, 4), TextEncoding{});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("offset 4: expected a number"));
  }
}

// A vocabulary of every 1- and 2-byte string over a small alphabet plus some longer tokens, and
// a special marker token.
std::shared_ptr<const TokenTrie> small_vocab(std::vector<std::string>& tokens) {
  const std::string alphabet = "ab{}\":, 0123";
  for (char c : alphabet) tokens.push_back(std::string(1, c));
  for (char c : alphabet)
    for (char d : alphabet) tokens.push_back(std::string{c, d});
  for (const char* t : {"{\"", "\":", "\"}", "abab", "0123", "\"a\":1", "}}"}) tokens.push_back(t);
  tokens.push_back("");  // an unused id
  tokens.push_back("<m>");
  tokens.push_back("<end>");
  const auto n = static_cast<int32_t>(tokens.size());
  return std::make_shared<const TokenTrie>(
      tokens, std::unordered_map<std::string, int32_t>{{"<m>", n - 2}, {"<end>", n - 1}});
}

TEST(GrammarMatcher, MaskEqualsTokenByTokenCheck) {
  // {"a":N} objects, repeated, then a marker: enough structure for many distinct states.
  GrammarBuilder b;
  const int32_t number = b.plus("n", {b.byte_range('0', '3')});
  const int32_t object =
      b.choice("o", {concat(b.literal("{\"a\":"), {GrammarBuilder::ref(number), b.byte('}')})});
  const int32_t objects = b.plus("os", {GrammarBuilder::ref(object)});
  const int32_t root = b.choice("root", {{GrammarBuilder::ref(objects), b.marker("<m>")}});
  auto grammar = std::make_shared<const Grammar>(b.build(root));
  std::vector<std::string> tokens;
  auto vocab = small_vocab(tokens);
  const int32_t end = vocab->vocab_size() - 1;
  GrammarMatcher matcher(grammar, vocab, {end});

  std::mt19937 rng(7);
  int checked_states = 0;
  for (int step = 0; step < 60 && !matcher.finished(); ++step) {
    const TokenBitmask mask = matcher.allowed_tokens();
    std::vector<int32_t> allowed;
    for (int32_t t = 0; t < vocab->vocab_size(); ++t) {
      GrammarMatcher copy = matcher;
      const bool ok = copy.accept_token(t);
      EXPECT_EQ(bitmask_test(mask, t), ok) << "token " << t << " at step " << step;
      if (ok) allowed.push_back(t);
    }
    ++checked_states;
    ASSERT_FALSE(allowed.empty());
    // Ordinary tokens first for 40 steps, so the walk goes deep before the marker ends it.
    std::vector<int32_t> ordinary;
    for (int32_t t : allowed)
      if (!vocab->token_bytes(t).empty()) ordinary.push_back(t);
    const std::vector<int32_t>& pick = step < 40 && !ordinary.empty() ? ordinary : allowed;
    ASSERT_TRUE(matcher.accept_token(pick[rng() % pick.size()]));
  }
  EXPECT_GT(checked_states, 30);
  EXPECT_TRUE(matcher.finished());
}

TEST(GrammarMatcher, EndTokenOnlyWhenComplete) {
  GrammarBuilder b;
  auto grammar = std::make_shared<const Grammar>(b.build(b.choice("r", {b.literal("ab")})));
  std::vector<std::string> tokens;
  auto vocab = small_vocab(tokens);
  const int32_t end = vocab->vocab_size() - 1;
  GrammarMatcher m(grammar, vocab, {end});
  EXPECT_FALSE(bitmask_test(m.allowed_tokens(), end));
  EXPECT_FALSE(m.accept_token(end));
  ASSERT_TRUE(m.accept_bytes("ab"));
  const TokenBitmask& mask = m.allowed_tokens();
  for (int32_t t = 0; t < vocab->vocab_size(); ++t) EXPECT_EQ(bitmask_test(mask, t), t == end);
  EXPECT_TRUE(m.accept_token(end));
  EXPECT_TRUE(m.finished());
}

TEST(GrammarMatcher, FreeTextThenTheMarkerThenTheGrammar) {
  GrammarBuilder b;
  Grammar inner = b.build(b.choice("r", {b.literal("ab")}));
  auto grammar = std::make_shared<const Grammar>(after_free_text(std::move(inner), "<m>"));
  std::vector<std::string> tokens;
  auto vocab = small_vocab(tokens);
  const int32_t marker = vocab->vocab_size() - 2, end = vocab->vocab_size() - 1;
  GrammarMatcher m(grammar, vocab, {end});
  ASSERT_TRUE(m.accept_bytes("{\"0123 ab}"));           // anything, even the grammar's own text
  EXPECT_FALSE(bitmask_test(m.allowed_tokens(), end));  // cannot stop before the marker
  EXPECT_TRUE(bitmask_test(m.allowed_tokens(), marker));
  ASSERT_TRUE(m.accept_token(marker));
  EXPECT_FALSE(m.accept_bytes("b"));
  ASSERT_TRUE(m.accept_bytes("ab"));
  EXPECT_TRUE(m.accept_token(end));
}

TEST(GrammarMatcher, AnOrdinaryEndTokenOnlyEndsACompleteSentence) {
  // "a" is an ordinary token and also the request's stop token: inside the sentence it is not
  // allowed (the engine would stop at it), at the end it is.
  GrammarBuilder b;
  auto grammar = std::make_shared<const Grammar>(b.build(b.choice("r", {b.literal("aab")})));
  std::vector<std::string> tokens;
  auto vocab = small_vocab(tokens);
  const int32_t a = 0;
  ASSERT_EQ(tokens[a], "a");
  GrammarMatcher m(grammar, vocab, {a});
  EXPECT_FALSE(bitmask_test(m.allowed_tokens(), a));
  EXPECT_FALSE(m.accept_token(a));
  ASSERT_TRUE(m.accept_bytes("aab"));
  EXPECT_TRUE(bitmask_test(m.allowed_tokens(), a));
  EXPECT_TRUE(m.accept_token(a));
  EXPECT_TRUE(m.finished());
}

TEST(GrammarMatcher, AllowedPrefixCountsADraftWithoutMoving) {
  GrammarBuilder b;
  auto grammar = std::make_shared<const Grammar>(b.build(b.choice("r", {b.literal("ab0")})));
  std::vector<std::string> tokens;
  auto vocab = small_vocab(tokens);
  const int32_t a = 0, bee = 1, zero = 8, end = vocab->vocab_size() - 1;
  ASSERT_EQ(tokens[bee], "b");
  ASSERT_EQ(tokens[zero], "0");
  GrammarMatcher m(grammar, vocab, {end});
  const std::vector<int32_t> draft = {a, bee, zero, end, a};
  EXPECT_EQ(m.allowed_prefix(draft), 4u);  // past the end token nothing is allowed
  EXPECT_EQ(m.allowed_prefix(std::vector<int32_t>{bee, zero}), 0u);
  EXPECT_EQ(m.allowed_prefix(std::vector<int32_t>{a, a}), 1u);
  // The matcher has not moved: the whole sentence is still ahead of it.
  EXPECT_FALSE(m.finished());
  ASSERT_TRUE(m.accept_token(a));
  EXPECT_EQ(m.allowed_prefix(std::vector<int32_t>{bee, zero, end}), 3u);
  ASSERT_TRUE(m.accept_bytes("b0"));
  ASSERT_TRUE(m.accept_token(end));
  EXPECT_EQ(m.allowed_prefix(std::vector<int32_t>{a}), 0u);
}

TEST(GrammarMatcher, UnknownMarkerIsAnError) {
  GrammarBuilder b;
  auto grammar = std::make_shared<const Grammar>(b.build(b.choice("r", {{b.marker("<nope>")}})));
  std::vector<std::string> tokens;
  EXPECT_THROW(GrammarMatcher(grammar, small_vocab(tokens), {}), Error);
}

TEST(TokenTrie, PreorderHoldsEveryToken) {
  std::vector<std::string> tokens;
  auto vocab = small_vocab(tokens);
  std::vector<int> seen(tokens.size(), 0);
  std::string path;
  for (size_t i = 0; i < vocab->node_count(); ++i) {
    path.resize(vocab->depth(i) - 1);
    path += static_cast<char>(vocab->byte(i));
    for (auto [t, end] = vocab->node_tokens(i); t != end; ++t) {
      EXPECT_EQ(tokens[*t], path);
      ++seen[*t];
    }
    EXPECT_GT(vocab->subtree_end(i), i);
  }
  for (size_t t = 0; t < tokens.size(); ++t)
    EXPECT_EQ(seen[t], tokens[t].empty() || tokens[t][0] == '<' ? 0 : 1) << t;
}

}  // namespace
}  // namespace minimax
