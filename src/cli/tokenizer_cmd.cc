// `minimax tokenizer train|encode|decode`: trains a small byte-level BPE tokenizer.json on a corpus
// and encodes / decodes JSON lines with one, so scripts (tools/tiny_model) tokenize exactly as the
// engine does without a second tokenizer implementation.
//   train:  --corpus F (JSON lines, each a string) --vocab-size N --output tokenizer.json
//   encode: --tokenizer F; stdin JSON lines, each a string; stdout one JSON array of ids per line
//   decode: --tokenizer F; stdin JSON lines, each an array of ids; stdout one JSON string per line
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/atomic_output.h"
#include "base/error.h"
#include "cli/commands.h"
#include "text/bpe_tokenizer.h"
#include "text/bpe_trainer.h"

namespace minimax::cli {
namespace {

using json = nlohmann::json;

// Reads one JSON value per non-empty line; `what` names the input in errors.
template <typename Visit>
void for_each_json_line(std::istream& in, const std::string& what, Visit visit) {
  std::string line;
  size_t line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty()) continue;
    json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) fail("{}: line {}: not valid JSON", what, line_number);
    visit(value, line_number);
  }
}

void run_train(const std::string& corpus_path, int vocab_size, const std::string& output) {
  if (vocab_size < 256) fail("--vocab-size: {} is below the 256 byte tokens", vocab_size);
  std::ifstream corpus(corpus_path);
  if (!corpus) fail("--corpus: cannot open {}", corpus_path);
  std::vector<std::string> texts;
  for_each_json_line(corpus, corpus_path, [&](const json& value, size_t line_number) {
    if (!value.is_string()) fail("{}: line {}: expected a JSON string", corpus_path, line_number);
    texts.push_back(value.get<std::string>());
  });
  if (texts.empty()) fail("--corpus: {} holds no texts", corpus_path);
  const json tokenizer = train_byte_level_bpe(texts, vocab_size, minimax_special_tokens());
  write_file_atomic(output, tokenizer.dump(2) + "\n");
  std::cerr << "trained " << tokenizer["model"]["vocab"].size() << " tokens (+"
            << tokenizer["added_tokens"].size() << " special) on " << texts.size() << " texts into "
            << output << "\n";
}

void run_encode(const std::string& tokenizer_path) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_file(tokenizer_path);
  for_each_json_line(std::cin, "stdin", [&](const json& value, size_t line_number) {
    if (!value.is_string()) fail("stdin: line {}: expected a JSON string", line_number);
    std::cout << json(tokenizer.encode(value.get_ref<const std::string&>())).dump() << "\n";
  });
}

void run_decode(const std::string& tokenizer_path) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_file(tokenizer_path);
  for_each_json_line(std::cin, "stdin", [&](const json& value, size_t line_number) {
    if (!value.is_array()) fail("stdin: line {}: expected a JSON array of ids", line_number);
    std::vector<int32_t> ids;
    for (const json& id : value) {
      if (!id.is_number_integer()) fail("stdin: line {}: ids must be integers", line_number);
      ids.push_back(id.get<int32_t>());
    }
    std::cout << json(tokenizer.decode(ids)).dump() << "\n";
  });
}

}  // namespace

void register_tokenizer(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("tokenizer",
                                     "Train a byte-level BPE tokenizer, or encode / "
                                     "decode JSON lines with one");
  cmd->require_subcommand(1);

  auto corpus = std::make_shared<std::string>();
  auto vocab_size = std::make_shared<int>(1024);
  auto output = std::make_shared<std::string>();
  CLI::App* train = cmd->add_subcommand(
      "train", "Train on a corpus of JSON-line strings; write tokenizer.json (MiniMax specials)");
  train->add_option("--corpus", *corpus, "Corpus file: one JSON string per line")->required();
  train->add_option("--vocab-size", *vocab_size, "Tokens before the special tokens (>= 256)");
  train->add_option("--output", *output, "tokenizer.json to write")->required();
  train->callback([=] { run_train(*corpus, *vocab_size, *output); });

  auto tokenizer = std::make_shared<std::string>();
  CLI::App* encode = cmd->add_subcommand(
      "encode", "stdin: JSON-line strings; stdout: one JSON array of token ids per line");
  encode->add_option("--tokenizer", *tokenizer, "tokenizer.json")->required();
  encode->callback([=] { run_encode(*tokenizer); });

  CLI::App* decode = cmd->add_subcommand(
      "decode", "stdin: JSON-line arrays of ids; stdout: one JSON string per line");
  decode->add_option("--tokenizer", *tokenizer, "tokenizer.json")->required();
  decode->callback([=] { run_decode(*tokenizer); });
}

}  // namespace minimax::cli
