// Internal state of BpeTokenizer, shared by the loader (tokenizer_json.cc) and the encoder and
// decoder (bpe_tokenizer.cc). Not part of the public API.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "text/added_tokens.h"
#include "text/bpe_model.h"
#include "text/bpe_tokenizer.h"
#include "text/pre_tokenizer.h"

namespace minimax {

struct BpeTokenizer::Impl {
  std::string source;
  std::unique_ptr<BpeModel> model;
  PreTokenizer pre_tokenizer;
  std::vector<AddedToken> added_tokens;
  TokenIdMap added_ids;
  // Added tokens matched on the raw text first, then those flagged "normalized" on what is left.
  AddedTokenMatcher raw_matcher;
  AddedTokenMatcher normalized_matcher;
  // Indexed by id, size vocab_size(): the stored token text, its decoded bytes, its special flag.
  std::vector<std::string> id_text;
  std::vector<std::string> id_bytes;
  std::vector<uint8_t> id_special;
};

}  // namespace minimax
