// Python float/str repr and json.dumps, reproduced byte for byte.
#include "text/jinja/py_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "base/error.h"
#include "text/jinja/unicode.h"

namespace minimax::jinja {
namespace {

void append_hex(std::string& out, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xF];
}

void append_json_string(std::string& out, std::string_view text, bool ensure_ascii) {
  out += '"';
  for (char32_t c : decode_utf8(text)) {
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      default:
        break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      if (c >= 0x10000) {  // UTF-16 surrogate pair, as Python writes it
        const char32_t v = c - 0x10000;
        out += "\\u";
        append_hex(out, 0xD800 | (v >> 10), 4);
        out += "\\u";
        append_hex(out, 0xDC00 | (v & 0x3FF), 4);
      } else {
        out += "\\u";
        append_hex(out, c, 4);
      }
    } else {
      append_utf8(out, c);
    }
  }
  out += '"';
}

void dump(std::string& out, const Json& value, const JsonDumpOptions& options, int depth) {
  const std::string item_separator =
      options.item_separator.value_or(options.indent.has_value() ? "," : ", ");
  auto newline = [&](int level) {
    if (!options.indent.has_value()) return;
    out += '\n';
    out.append(static_cast<size_t>(std::max(0, *options.indent) * level), ' ');
  };
  switch (value.type()) {
    case Json::value_t::null:
      out += "null";
      return;
    case Json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case Json::value_t::number_integer:
      out += std::to_string(value.get<int64_t>());
      return;
    case Json::value_t::number_unsigned:
      out += std::to_string(value.get<uint64_t>());
      return;
    case Json::value_t::number_float: {
      const double d = value.get<double>();
      if (std::isnan(d))
        out += "NaN";
      else if (std::isinf(d))
        out += d > 0 ? "Infinity" : "-Infinity";
      else
        out += python_float_repr(d);
      return;
    }
    case Json::value_t::string:
      append_json_string(out, value.get_ref<const std::string&>(), options.ensure_ascii);
      return;
    case Json::value_t::array: {
      if (value.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      bool first = true;
      for (const Json& item : value) {
        if (!first) out += item_separator;
        first = false;
        newline(depth + 1);
        dump(out, item, options, depth + 1);
      }
      newline(depth);
      out += ']';
      return;
    }
    case Json::value_t::object: {
      if (value.empty()) {
        out += "{}";
        return;
      }
      std::vector<std::pair<const std::string*, const Json*>> members;
      for (auto it = value.begin(); it != value.end(); ++it) {
        members.emplace_back(&it.key(), &it.value());
      }
      if (options.sort_keys) {
        std::stable_sort(members.begin(), members.end(),
                         [](const auto& a, const auto& b) { return *a.first < *b.first; });
      }
      out += '{';
      bool first = true;
      for (const auto& [key, member] : members) {
        if (!first) out += item_separator;
        first = false;
        newline(depth + 1);
        append_json_string(out, *key, options.ensure_ascii);
        out += options.key_separator;
        dump(out, *member, options, depth + 1);
      }
      newline(depth);
      out += '}';
      return;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded:
      break;
  }
  fail("tojson: a binary or discarded JSON value cannot be serialized");
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  std::string text(buffer, result.ptr);  // e.g. "-1.2345e+03", shortest round-trip digits
  std::string sign;
  if (text[0] == '-') {
    sign = "-";
    text.erase(0, 1);
  }
  const size_t e = text.find('e');
  std::string digits = text.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exponent = std::stoi(text.substr(e + 1));
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());
  std::string out = sign;
  if (point > -4 && point <= 16) {  // Python's repr switches to exponent form outside this range
    if (point <= 0) {
      out += "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    } else if (point >= count) {
      out += digits + std::string(static_cast<size_t>(point - count), '0') + ".0";
    } else {
      out += digits.substr(0, point) + "." + digits.substr(point);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (count > 1) out += "." + digits.substr(1);
  const int shown = point - 1;
  out += shown < 0 ? "e-" : "e+";
  const std::string magnitude = std::to_string(std::abs(shown));
  if (magnitude.size() < 2) out += '0';
  return out + magnitude;
}

std::string python_string_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : decode_utf8(text)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (is_python_printable(c)) {
      append_utf8(out, c);
    } else if (c <= 0xFF) {
      out += "\\x";
      append_hex(out, c, 2);
    } else if (c <= 0xFFFF) {
      out += "\\u";
      append_hex(out, c, 4);
    } else {
      out += "\\U";
      append_hex(out, c, 8);
    }
  }
  out += quote;
  return out;
}

std::string python_repr(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "None";
    case Json::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case Json::value_t::number_integer:
      return std::to_string(value.get<int64_t>());
    case Json::value_t::number_unsigned:
      return std::to_string(value.get<uint64_t>());
    case Json::value_t::number_float:
      return python_float_repr(value.get<double>());
    case Json::value_t::string:
      return python_string_repr(value.get_ref<const std::string&>());
    case Json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i) {
        if (i > 0) out += ", ";
        out += python_repr(value[i]);
      }
      return out + "]";
    }
    case Json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out += ", ";
        first = false;
        out += python_string_repr(it.key()) + ": " + python_repr(it.value());
      }
      return out + "}";
    }
    case Json::value_t::binary:
    case Json::value_t::discarded:
      break;
  }
  return "<binary>";
}

std::string python_json_dumps(const Json& value, const JsonDumpOptions& options) {
  std::string out;
  dump(out, value, options, 0);
  return out;
}

}  // namespace minimax::jinja
