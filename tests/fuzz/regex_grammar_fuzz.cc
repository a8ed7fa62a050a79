// libFuzzer target for the regex grammar compiler (text/grammar/regex_grammar.h): any byte string,
// taken as a pattern, must compile to a grammar or throw minimax::Error; a grammar that compiles
// is then run as constrained decoding runs it (grammar_walk.h), as JSON string content and as raw
// text without '<' (an M2 tool-call value). Crashes, hangs, other exceptions, masks that disagree
// with the automaton and sanitizer reports are the failures. Seed corpus:
// tests/data/regex_patterns/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "base/error.h"
#include "grammar_walk.h"
#include "text/grammar/regex_grammar.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view pattern(reinterpret_cast<const char*>(data), size);
  minimax::fuzz::WalkChoices choices(pattern);
  for (bool json : {true, false}) {
    minimax::TextEncoding encoding;
    encoding.json_escape = json;
    if (!json) encoding.forbidden.set('<');
    std::shared_ptr<const minimax::Grammar> grammar;
    try {
      minimax::GrammarBuilder builder;
      const int32_t root = minimax::regex_rule(builder, pattern, encoding);
      grammar = std::make_shared<const minimax::Grammar>(builder.build(root));
    } catch (const minimax::Error&) {
      continue;  // a refusal: the server answers 400
    }
    minimax::fuzz::walk_grammar(grammar, choices, 24);
  }
  return 0;
}
