// str, dict and list methods with Python's behaviour (split with and without a separator, strip
// sets, startswith with a tuple, replace counts, dict.get defaults).
#include "text/jinja/methods.h"

#include <algorithm>
#include <iterator>

#include "base/error.h"
#include "text/jinja/access.h"
#include "text/jinja/arguments.h"
#include "text/jinja/unicode.h"

namespace minimax::jinja {
namespace {

constexpr std::string_view kStringMethods[] = {
    "split",   "rsplit", "strip",   "lstrip",     "rstrip",     "startswith",   "endswith",
    "replace", "lower",  "upper",   "capitalize", "title",      "find",         "rfind",
    "count",   "join",   "isdigit", "isspace",    "splitlines", "removeprefix", "removesuffix"};
constexpr std::string_view kDictMethods[] = {"items", "keys", "values", "get", "copy"};
constexpr std::string_view kDictMutators[] = {"clear", "pop", "popitem", "setdefault", "update"};
constexpr std::string_view kListMethods[] = {"index", "count", "copy"};
constexpr std::string_view kListMutators[] = {"append", "extend",  "insert", "pop",
                                              "remove", "reverse", "sort",   "clear"};

template <size_t N>
bool listed(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

Value string_list(const std::vector<std::string>& parts) {
  Json out = Json::array();
  for (const std::string& part : parts) out.push_back(part);
  return Value::from_json(std::move(out));
}

std::string replace_all(std::string_view text, std::string_view old_text, std::string_view new_text,
                        int64_t count) {
  std::string out;
  if (old_text.empty()) {  // Python inserts `new` before every character and at the end
    const std::vector<char32_t> cps = decode_utf8(text);
    int64_t done = 0;
    for (char32_t c : cps) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
      }
      append_utf8(out, c);
    }
    if (count < 0 || done < count) out += new_text;
    return out;
  }
  size_t at = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t found = text.find(old_text, at);
    if (found == std::string_view::npos) break;
    out.append(text.substr(at, found - at));
    out += new_text;
    at = found + old_text.size();
    ++done;
  }
  out.append(text.substr(at));
  return out;
}

bool affix_matches(std::string_view text, const Value& affix, bool prefix) {
  auto one = [&](const Value& candidate) {
    if (!candidate.is_string()) {
      fail("{}() argument must be str or a tuple of str, not {}",
           prefix ? "startswith" : "endswith", type_name(candidate));
    }
    const std::string& a = candidate.str();
    return text.size() >= a.size() &&
           (prefix ? text.substr(0, a.size()) == a : text.substr(text.size() - a.size()) == a);
  };
  if (affix.is_list()) {
    for (size_t i = 0; i < affix.size(); ++i) {
      if (one(affix.item(i))) return true;
    }
    return false;
  }
  return one(affix);
}

int64_t code_point_index(std::string_view text, size_t byte_offset) {
  return static_cast<int64_t>(count_code_points(text.substr(0, byte_offset)));
}

std::string title_case(std::string_view text) {
  std::string out;
  bool previous_cased = false;
  for (char32_t c : decode_utf8(text)) {
    const bool cased = to_lower(c) != to_upper(c);
    append_utf8(out, cased ? (previous_cased ? to_lower(c) : to_upper(c)) : c);
    previous_cased = cased;
  }
  return out;
}

Value string_method(const std::string& s, std::string_view name, CallArgs& call) {
  if (name == "split" || name == "rsplit") {
    BoundArgs args(name, call, {"sep", "maxsplit"});
    const std::optional<std::string> sep = args.string_or_none(0);
    return split_string(s, sep ? &*sep : nullptr, args.int_or_none(1).value_or(-1),
                        name == "rsplit");
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    BoundArgs args(name, call, {"chars"});
    const std::optional<std::string> chars = args.string_or_none(0);
    return Value::string(
        strip_python(s, chars ? &*chars : nullptr, name != "rstrip", name != "lstrip"));
  }
  if (name == "startswith" || name == "endswith") {
    BoundArgs args(name, call, {"affix"});
    return Value::boolean(affix_matches(s, args.get(0), name == "startswith"));
  }
  if (name == "replace") {
    BoundArgs args(name, call, {"old", "new", "count"});
    const Value& old_text = args.get(0);
    const Value& new_text = args.get(1);
    if (!old_text.is_string() || !new_text.is_string()) fail("replace() arguments must be str");
    return Value::string(
        replace_all(s, old_text.str(), new_text.str(), args.int_or_none(2).value_or(-1)));
  }
  if (name == "lower" || name == "upper" || name == "capitalize" || name == "title") {
    BoundArgs args(name, call, {});
    if (name == "lower") return Value::string(lower_string(s));
    if (name == "upper") return Value::string(upper_string(s));
    if (name == "title") return Value::string(title_case(s));
    const std::vector<char32_t> cps = decode_utf8(s);
    std::string out;
    for (size_t i = 0; i < cps.size(); ++i)
      append_utf8(out, i == 0 ? to_upper(cps[i]) : to_lower(cps[i]));
    return Value::string(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "count") {
    BoundArgs args(name, call, {"sub"});
    if (!args.get(0).is_string())
      fail("{}() argument must be str, not {}", name, type_name(args.get(0)));
    const std::string& sub = args.get(0).str();
    if (name == "count") {
      if (sub.empty()) return Value::integer(static_cast<int64_t>(count_code_points(s)) + 1);
      int64_t n = 0;
      for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
      return Value::integer(n);
    }
    const size_t at = name == "find" ? s.find(sub) : s.rfind(sub);
    return Value::integer(at == std::string::npos ? -1 : code_point_index(s, at));
  }
  if (name == "join") {
    BoundArgs args(name, call, {"iterable"});
    std::string out;
    bool first = true;
    for (const Value& item : iterate(args.get(0))) {
      if (!item.is_string()) fail("join() expects str items, found {}", type_name(item));
      if (!first) out += s;
      first = false;
      out += item.str();
    }
    return Value::string(std::move(out));
  }
  if (name == "isdigit" || name == "isspace") {
    BoundArgs args(name, call, {});
    const std::vector<char32_t> cps = decode_utf8(s);
    return Value::boolean(!cps.empty() && std::all_of(cps.begin(), cps.end(), [&](char32_t c) {
      return name == "isdigit" ? (c >= '0' && c <= '9') : is_python_space(c);
    }));
  }
  if (name == "splitlines") {
    BoundArgs args(name, call, {});
    std::vector<std::string> lines;
    size_t at = 0;
    while (at < s.size()) {
      size_t end = s.find_first_of("\n\r", at);
      if (end == std::string::npos) {
        lines.push_back(s.substr(at));
        break;
      }
      lines.push_back(s.substr(at, end - at));
      at = end + (s[end] == '\r' && end + 1 < s.size() && s[end + 1] == '\n' ? 2 : 1);
    }
    return string_list(lines);
  }
  BoundArgs args(name, call, {"affix"});  // removeprefix / removesuffix
  if (!args.get(0).is_string()) fail("{}() argument must be str", name);
  const std::string& affix = args.get(0).str();
  if (name == "removeprefix") {
    return Value::string(s.rfind(affix, 0) == 0 ? s.substr(affix.size()) : s);
  }
  const bool ends =
      s.size() >= affix.size() && s.compare(s.size() - affix.size(), affix.size(), affix) == 0;
  return Value::string(ends ? s.substr(0, s.size() - affix.size()) : s);
}

Value dict_method(const Value& self, std::string_view name, CallArgs& call) {
  if (name == "get") {
    BoundArgs args(name, call, {"key", "default"});
    const Value& key = args.get(0);
    if (key.is_string() && self.has_member(key.str())) return self.member(key.str());
    return args.get_or(1, Value::none());
  }
  BoundArgs args(name, call, {});
  if (name == "copy") return self;
  Json out = Json::array();
  for (auto it = self.json().begin(); it != self.json().end(); ++it) {
    if (name == "items") out.push_back(Json::array({it.key(), it.value()}));
    if (name == "keys") out.push_back(it.key());
    if (name == "values") out.push_back(it.value());
  }
  return Value::from_json(std::move(out));
}

Value list_method(const Value& self, std::string_view name, CallArgs& call) {
  if (name == "copy") {
    BoundArgs args(name, call, {});
    return self;
  }
  BoundArgs args(name, call, {"value"});
  int64_t count = 0;
  for (size_t i = 0; i < self.size(); ++i) {
    if (!equal(self.item(i), args.get(0))) continue;
    if (name == "index") return Value::integer(static_cast<int64_t>(i));
    ++count;
  }
  if (name == "index") fail("{} is not in list", to_repr(args.get(0)));
  return Value::integer(count);
}

}  // namespace

MethodAccess method_access(const Value& self, std::string_view name) {
  if (self.is_string() && listed(kStringMethods, name)) return MethodAccess::kSafe;
  if (self.is_dict()) {
    if (listed(kDictMethods, name)) return MethodAccess::kSafe;
    if (listed(kDictMutators, name)) return MethodAccess::kUnsafe;
  }
  if (self.is_list()) {
    if (listed(kListMethods, name)) return MethodAccess::kSafe;
    if (listed(kListMutators, name)) return MethodAccess::kUnsafe;
  }
  return MethodAccess::kNone;
}

Value call_method(const Value& self, std::string_view name, CallArgs& args) {
  if (self.is_string()) return string_method(self.str(), name, args);
  if (self.is_dict()) return dict_method(self, name, args);
  return list_method(self, name, args);
}

Value split_string(std::string_view text, const std::string* sep, int64_t max_split,
                   bool from_right) {
  std::vector<std::string> parts;
  if (sep != nullptr) {
    if (sep->empty()) fail("empty separator");
    if (!from_right) {
      size_t at = 0;
      for (size_t found = text.find(*sep);
           found != std::string_view::npos &&
           (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split);
           found = text.find(*sep, at)) {
        parts.emplace_back(text.substr(at, found - at));
        at = found + sep->size();
      }
      parts.emplace_back(text.substr(at));
    } else {
      size_t end = text.size();
      while (max_split < 0 || static_cast<int64_t>(parts.size()) < max_split) {
        if (end < sep->size()) break;
        const size_t found = text.rfind(*sep, end - sep->size());
        if (found == std::string_view::npos) break;
        parts.emplace_back(text.substr(found + sep->size(), end - found - sep->size()));
        end = found;
      }
      parts.emplace_back(text.substr(0, end));
      std::reverse(parts.begin(), parts.end());
    }
    return string_list(parts);
  }
  // Whitespace splitting: runs of whitespace separate, ends are ignored, and once max_split
  // splits are made the rest (without its leading whitespace) is the last part.
  std::vector<char32_t> cps = decode_utf8(text);
  if (from_right) std::reverse(cps.begin(), cps.end());
  size_t i = 0;
  while (true) {
    while (i < cps.size() && is_python_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (max_split >= 0 && static_cast<int64_t>(parts.size()) == max_split) {
      size_t end = cps.size();
      if (!from_right) {
        parts.push_back(encode_utf8(cps, i, end));
      } else {
        std::vector<char32_t> rest(cps.begin() + static_cast<long>(i), cps.end());
        std::reverse(rest.begin(), rest.end());
        parts.push_back(encode_utf8(rest, 0, rest.size()));
      }
      break;
    }
    size_t j = i;
    while (j < cps.size() && !is_python_space(cps[j])) ++j;
    std::vector<char32_t> word(cps.begin() + static_cast<long>(i),
                               cps.begin() + static_cast<long>(j));
    if (from_right) std::reverse(word.begin(), word.end());
    parts.push_back(encode_utf8(word, 0, word.size()));
    i = j;
  }
  if (from_right) std::reverse(parts.begin(), parts.end());
  return string_list(parts);
}

}  // namespace minimax::jinja
