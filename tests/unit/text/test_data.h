// Shared helpers for the text tests: paths and files under tests/data/tokenizer.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "text/bpe_tokenizer.h"

namespace minimax::testing {

inline std::string tokenizer_data(const std::string& name) {
  return std::string(MINIMAX_TEST_DATA) + "/tokenizer/" + name;
}

// The repository root (tests/data is two levels below it).
inline std::string repo_path(const std::string& relative) {
  return (std::filesystem::path(MINIMAX_TEST_DATA) / ".." / ".." / relative).lexically_normal();
}

// The committed tokenizer trained on train_corpus.txt, loaded once.
inline const BpeTokenizer& trained() {
  static const BpeTokenizer tokenizer =
      BpeTokenizer::from_file(tokenizer_data("trained_tokenizer.json"));
  return tokenizer;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline nlohmann::json read_json(const std::string& path) {
  return nlohmann::json::parse(read_file(path));
}

// The training texts of the committed tokenizer: train_corpus.txt split at blank lines.
inline std::vector<std::string> training_texts() {
  const std::string corpus = read_file(tokenizer_data("train_corpus.txt"));
  std::vector<std::string> texts;
  size_t start = 0;
  while (start < corpus.size()) {
    size_t end = corpus.find("\n\n", start);
    if (end == std::string::npos) end = corpus.size();
    texts.push_back(corpus.substr(start, end - start));
    start = end + 2;
  }
  return texts;
}

// Vocabulary size of the committed trained tokenizer (specials not counted).
inline constexpr int kTrainedVocabSize = 1000;

}  // namespace minimax::testing
