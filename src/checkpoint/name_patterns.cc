// fnmatch globs, start-anchored regexes and each quantization format's ignore-list rule.
#include "checkpoint/name_patterns.h"

#include <regex>
#include <unordered_map>

#include "base/error.h"

namespace minimax {
namespace {

// A `[...]` set starting at pattern[open]. Returns false when there is no closing `]` (then `[` is
// a literal, as in Python). Otherwise sets *end to one past the `]` and *matched.
bool match_set(std::string_view pattern, size_t open, char ch, size_t* end, bool* matched) {
  size_t j = open + 1;
  bool negate = j < pattern.size() && pattern[j] == '!';
  if (negate) ++j;
  size_t members = j;
  if (j < pattern.size() && pattern[j] == ']') ++j;  // a leading `]` is a member
  while (j < pattern.size() && pattern[j] != ']') ++j;
  if (j >= pattern.size()) return false;
  bool in_set = false;
  for (size_t k = members; k < j;) {
    if (k + 2 < j && pattern[k + 1] == '-') {
      in_set |= pattern[k] <= ch && ch <= pattern[k + 2];  // a reversed range is empty
      k += 3;
    } else {
      in_set |= pattern[k] == ch;
      ++k;
    }
  }
  *end = j + 1;
  *matched = in_set != negate;
  return true;
}

}  // namespace

bool has_glob_chars(std::string_view pattern) {
  return pattern.find_first_of("*?[") != std::string_view::npos;
}

bool glob_match(std::string_view pattern, std::string_view name) {
  size_t p = 0, n = 0;
  size_t star = std::string_view::npos, star_name = 0;  // last `*` seen, for backtracking
  while (n < name.size()) {
    bool advanced = false;
    if (p < pattern.size()) {
      char c = pattern[p];
      if (c == '*') {
        star = p++;
        star_name = n;
        continue;
      }
      size_t set_end = 0;
      bool in_set = false;
      if (c == '[' && match_set(pattern, p, name[n], &set_end, &in_set)) {
        if (in_set) {
          p = set_end;
          ++n;
          advanced = true;
        }
      } else if (c == '?' || c == name[n]) {
        ++p;
        ++n;
        advanced = true;
      }
    }
    if (advanced) continue;
    if (star == std::string_view::npos) return false;
    p = star + 1;  // let the last `*` swallow one more character
    n = ++star_name;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool regex_match_start(const std::string& pattern, const std::string& name) {
  thread_local std::unordered_map<std::string, std::regex> compiled;
  auto it = compiled.find(pattern);
  if (it == compiled.end()) {
    try {
      it = compiled.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
    } catch (const std::regex_error& e) {
      fail("regular expression '{}' does not compile: {}", pattern, e.what());
    }
  }
  return std::regex_search(name, it->second, std::regex_constants::match_continuous);
}

bool matches_modules_to_not_convert(const std::string& entry, const std::string& name) {
  // transformers also tries re.match(entry + "\\."), which the plain re.match already covers.
  if (name.ends_with(entry)) return true;
  // Without regex syntax re.match is a prefix test; skip std::regex on the common path.
  if (entry.find_first_of(".^$*+?()[]{}|\\") == std::string::npos) return name.starts_with(entry);
  return regex_match_start(entry, name);
}

bool matches_compressed_tensors(const std::string& entry, const std::string& name) {
  if (entry.starts_with("re:")) return regex_match_start(entry.substr(3), name);
  return entry == name;
}

bool matches_quark(const std::string& entry, const std::string& name) {
  if (entry.starts_with("re:")) return regex_match_start(entry.substr(3), name);
  return entry == name || glob_match(entry, name);
}

bool matches_modelopt(const std::string& entry, const std::string& name) {
  if (entry.size() >= 2 && entry.back() == '*' && entry[entry.size() - 2] != '.') {
    // vLLM rewrites "path*" as "path" + "path.*": the module and its subtree. (vLLM then also tests
    // "path" as a substring, which would reach "model.layers.10" from "model.layers.1*"; ModelOpt
    // never means that, so it is not copied here.)
    thread_local std::string subtree;  // "path.*", reused: loaders ask once per tensor
    subtree.assign(entry, 0, entry.size() - 1);
    subtree += ".*";
    std::string_view pattern = subtree;
    return glob_match(pattern.substr(0, pattern.size() - 2), name) || glob_match(pattern, name);
  }
  if (entry == name) return true;
  if (!has_glob_chars(entry) && name.find(entry) != std::string::npos) return true;
  return glob_match(entry, name);
}

}  // namespace minimax
