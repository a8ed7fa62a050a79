// libFuzzer target for the JSON-schema grammar compiler (serve/json_schema_grammar.h): any byte
// string is read as a response_format schema is, through the request parser's JSON reader (which
// refuses nesting deeper than 64 before parsing, and invalid JSON, with a 400); a schema object
// or boolean must compile to a grammar or throw SchemaError (the 400 the server answers), and a
// grammar that compiles is run as constrained decoding runs it (grammar_walk.h). Crashes, hangs,
// other exceptions, wrong masks and sanitizer reports are the failures. Seed corpus:
// tests/data/json_schemas/.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "grammar_walk.h"
#include "serve/api_error.h"
#include "serve/json_schema_grammar.h"
#include "serve/request_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::ordered_json schema;
  try {
    schema = minimax::request_fields::parse_json(text, "schema");
  } catch (const minimax::ApiException&) {
    return 0;
  }
  if (!schema.is_object() && !schema.is_boolean()) return 0;  // refused before compiling
  std::shared_ptr<const minimax::Grammar> grammar;
  try {
    grammar = std::make_shared<const minimax::Grammar>(minimax::json_schema_grammar(schema));
  } catch (const minimax::SchemaError&) {
    return 0;
  }
  minimax::fuzz::WalkChoices choices(text);
  minimax::fuzz::walk_grammar(grammar, choices, 32);
  return 0;
}
