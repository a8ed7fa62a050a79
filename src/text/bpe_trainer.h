// Training of small byte-level BPE tokenizers (for tiny test checkpoints and golden files): the
// result is a complete Hugging Face tokenizer.json with the MiniMax pre-tokenizer (o200k Split,
// Isolated, then ByteLevel) that BpeTokenizer and Hugging Face `tokenizers` both load.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax {

// Trains on `texts` (valid UTF-8) until the vocabulary holds `vocab_size` tokens (specials not
// counted) or no pair is left to merge. Ids 0..255 are the 256 byte tokens in byte order; each
// merge adds the next id. Deterministic: the most frequent adjacent pair wins, ties go to the
// smallest (left id, right id). Special tokens are cut out of the texts before counting and get the
// ids after the vocabulary, as added_tokens with special: true.
nlohmann::json train_byte_level_bpe(const std::vector<std::string>& texts, int vocab_size,
                                    const std::vector<std::string>& special_tokens);

// The MiniMax special tokens for tiny checkpoints, in the order of spec/model.md §4 and
// spec/parsers.md: ]!p~[ ]~b] [e~[ ]!d~[ ]~!b[ <think> </think> <minimax:tool_call>
// </minimax:tool_call> <mm:think> </mm:think> ]<]minimax[>[ and the three image tokens.
const std::vector<std::string>& minimax_special_tokens();

}  // namespace minimax
