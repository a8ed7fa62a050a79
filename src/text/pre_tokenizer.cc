// Pre-tokenizer steps from tokenizer.json and their application to text.
#include "text/pre_tokenizer.h"

#include <algorithm>

#include "base/error.h"
#include "text/byte_level.h"

namespace minimax {
namespace {

using nlohmann::json;

SplitBehavior parse_behavior(const json& value, const std::string& where) {
  if (!value.is_string()) fail("{}.behavior: expected a string", where);
  const std::string name = value.get<std::string>();
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  fail("{}.behavior: unknown split behaviour '{}'", where, name);
}

bool optional_bool(const json& object, const char* key, bool fallback, const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) fail("{}.{}: expected true or false", where, key);
  return it->get<bool>();
}

struct Piece {
  size_t begin;
  size_t end;
  bool is_match;
};

}  // namespace

std::vector<std::string> split_by_regex(std::string_view text, const Regex& regex,
                                        SplitBehavior behavior, bool invert) {
  // Cover the text with alternating matched / unmatched pieces.
  std::vector<Piece> pieces;
  size_t previous = 0;
  for (const auto& [begin, end] : regex.find_all(text)) {
    if (begin > previous) pieces.push_back({previous, begin, invert});
    pieces.push_back({begin, end, !invert});
    previous = end;
  }
  if (previous < text.size()) pieces.push_back({previous, text.size(), invert});

  std::vector<Piece> merged;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      merged = pieces;
      break;
    case SplitBehavior::kRemoved:
      for (const Piece& p : pieces) {
        if (!p.is_match) merged.push_back(p);
      }
      break;
    case SplitBehavior::kContiguous:
      for (const Piece& p : pieces) {
        if (p.is_match && !merged.empty() && merged.back().is_match) {
          merged.back().end = p.end;
        } else {
          merged.push_back(p);
        }
      }
      break;
    case SplitBehavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const Piece& p : pieces) {
        if (p.is_match && !previous_match && !merged.empty()) {
          merged.back().end = p.end;
        } else {
          merged.push_back(p);
        }
        previous_match = p.is_match;
      }
      break;
    }
    case SplitBehavior::kMergedWithNext: {
      bool previous_match = false;
      for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
        if (it->is_match && !previous_match && !merged.empty()) {
          merged.back().begin = it->begin;
        } else {
          merged.push_back(*it);
        }
        previous_match = it->is_match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
    }
  }
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const Piece& p : merged) {
    if (p.end > p.begin) out.emplace_back(text.substr(p.begin, p.end - p.begin));
  }
  return out;
}

PreTokenizer PreTokenizer::from_json(const json& value, const std::string& where) {
  PreTokenizer result;
  if (!value.is_null()) result.add_steps(value, where);
  return result;
}

void PreTokenizer::add_steps(const json& value, const std::string& where) {
  if (!value.is_object()) fail("{}: expected an object", where);
  const auto type_it = value.find("type");
  if (type_it == value.end() || !type_it->is_string())
    fail("{}.type: missing or not a string", where);
  const std::string type = type_it->get<std::string>();
  if (type == "Sequence") {
    const auto list = value.find("pretokenizers");
    if (list == value.end() || !list->is_array())
      fail("{}.pretokenizers: expected an array", where);
    for (size_t i = 0; i < list->size(); ++i) {
      add_steps((*list)[i], fmt::format("{}.pretokenizers[{}]", where, i));
    }
  } else if (type == "Split") {
    const auto pattern = value.find("pattern");
    if (pattern == value.end() || !pattern->is_object()) {
      fail("{}.pattern: expected {{\"Regex\": ...}} or {{\"String\": ...}}", where);
    }
    std::string regex_text;
    if (pattern->contains("Regex") && (*pattern)["Regex"].is_string()) {
      regex_text = (*pattern)["Regex"].get<std::string>();
    } else if (pattern->contains("String") && (*pattern)["String"].is_string()) {
      regex_text = regex_escape((*pattern)["String"].get<std::string>());
    } else {
      fail("{}.pattern: expected {{\"Regex\": ...}} or {{\"String\": ...}}", where);
    }
    Step step;
    step.regex = std::make_shared<Regex>(regex_text, where + ".pattern");
    const auto behavior = value.find("behavior");
    if (behavior == value.end()) fail("{}.behavior: missing", where);
    step.behavior = parse_behavior(*behavior, where);
    step.invert = optional_bool(value, "invert", false, where);
    steps_.push_back(std::move(step));
  } else if (type == "Digits") {
    Step step;
    const bool individual = optional_bool(value, "individual_digits", false, where);
    step.regex = std::make_shared<Regex>(individual ? R"(\p{N})" : R"(\p{N}+)", where);
    steps_.push_back(std::move(step));
  } else if (type == "ByteLevel") {
    Step step;
    step.kind = Step::Kind::kByteLevel;
    step.add_prefix_space = optional_bool(value, "add_prefix_space", true, where);
    if (optional_bool(value, "use_regex", true, where)) {
      step.regex = std::make_shared<Regex>(kGpt2Pattern, where + " (GPT-2 pattern)");
    }
    steps_.push_back(std::move(step));
  } else {
    fail("{}.type: pre-tokenizer '{}' is not supported (Sequence, Split, Digits, ByteLevel are)",
         where, type);
  }
}

bool PreTokenizer::has_byte_level() const {
  for (const Step& step : steps_) {
    if (step.kind == Step::Kind::kByteLevel) return true;
  }
  return false;
}

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string> words;
  if (text.empty()) return words;
  words.emplace_back(text);
  for (const Step& step : steps_) {
    std::vector<std::string> next;
    next.reserve(words.size());
    for (std::string& word : words) {
      if (step.kind == Step::Kind::kByteLevel && step.add_prefix_space && word[0] != ' ') {
        word.insert(word.begin(), ' ');
      }
      if (step.regex == nullptr) {
        next.push_back(std::move(word));
        continue;
      }
      for (std::string& piece : split_by_regex(word, *step.regex, step.behavior, step.invert)) {
        next.push_back(std::move(piece));
      }
    }
    if (step.kind == Step::Kind::kByteLevel) {
      for (std::string& word : next) word = to_byte_level(word);
    }
    words = std::move(next);
  }
  return words;
}

}  // namespace minimax
