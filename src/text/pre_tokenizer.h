// The pre-tokenizer of a tokenizer.json: regex Split steps (with Hugging Face's five delimiter
// behaviours), Digits, and the ByteLevel step that maps bytes to the GPT-2 alphabet. It turns one
// stretch of text (between added tokens) into the words that BPE then encodes one by one.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "text/regex.h"

namespace minimax {

// The pattern MiniMax-M2 (and o200k / gpt-oss) split on before byte-level BPE (spec/model.md §4).
inline constexpr std::string_view kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The GPT-2 pattern the ByteLevel step applies when its use_regex flag is set.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class PreTokenizer {
 public:
  // Builds the steps from the "pre_tokenizer" value; `where` names the file and field for errors.
  static PreTokenizer from_json(const nlohmann::json& value, const std::string& where);

  // Splits valid UTF-8 `text` into words, each in byte-level form when a ByteLevel step ran.
  std::vector<std::string> split(std::string_view text) const;

  bool has_byte_level() const;

 private:
  struct Step {
    enum class Kind { kSplit, kByteLevel } kind = Kind::kSplit;
    std::shared_ptr<const Regex> regex;  // Split, Digits, ByteLevel with use_regex
    SplitBehavior behavior = SplitBehavior::kIsolated;
    bool invert = false;
    bool add_prefix_space = false;  // ByteLevel only
  };

  void add_steps(const nlohmann::json& value, const std::string& where);

  std::vector<Step> steps_;
};

// Splits `text` on the matches of `regex` the way Hugging Face's Split pre-tokenizer does.
std::vector<std::string> split_by_regex(std::string_view text, const Regex& regex,
                                        SplitBehavior behavior, bool invert);

}  // namespace minimax
