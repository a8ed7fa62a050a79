// PCRE2 wrapper: compile once with PCRE2_UTF | PCRE2_UCP, JIT when available, and fall back to the
// interpreter when the JIT stack is too small for a long input.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/regex.h"

#include <pcre2.h>

#include "base/error.h"
#include "text/utf8.h"

namespace minimax {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof(buffer));
  return n < 0 ? fmt::format("PCRE2 error {}", code) : std::string(reinterpret_cast<char*>(buffer));
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};

}  // namespace

Regex::Regex(std::string_view pattern, std::string what)
    : pattern_(pattern), what_(std::move(what)) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern_.data()), pattern_.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    fail("{}: cannot compile regex at offset {}: {} (pattern: {})", what_, error_offset,
         pcre2_message(error_code), pattern_);
  }
  // JIT is only a speed-up; the interpreter gives the same matches if it is unavailable.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  code_.reset(code, pcre2_code_free);
}

bool Regex::match_from(std::string_view text, size_t offset, uint32_t options, size_t* begin,
                       size_t* end) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data(
      pcre2_match_data_create_from_pattern(code_.get(), nullptr));
  const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  // The caller validated the UTF-8 once; re-checking per call would make find_all quadratic.
  options |= PCRE2_NO_UTF_CHECK;
  int rc = pcre2_match(code_.get(), subject, text.size(), offset, options, data.get(), nullptr);
  if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
    rc = pcre2_match(code_.get(), subject, text.size(), offset, options | PCRE2_NO_JIT, data.get(),
                     nullptr);
  }
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) fail("{}: regex match failed: {}", what_, pcre2_message(rc));
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
  *begin = ovector[0];
  *end = ovector[1];
  return true;
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> spans;
  size_t offset = 0;
  while (offset < text.size()) {
    size_t begin = 0;
    size_t end = 0;
    if (!match_from(text, offset, 0, &begin, &end)) break;
    if (end > begin) {
      spans.emplace_back(begin, end);
      offset = end;
    } else {
      const utf8::Sequence seq = utf8::scan(text, begin);
      offset = begin + seq.length;
    }
  }
  return spans;
}

bool Regex::matches_whole(std::string_view text) const {
  size_t begin = 0;
  size_t end = 0;
  if (!match_from(text, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, &begin, &end)) return false;
  return begin == 0 && end == text.size();
}

std::string regex_escape(std::string_view literal) {
  // \Q..\E quotes everything except a literal "\E", which is split out.
  std::string out = "\\Q";
  size_t pos = 0;
  while (true) {
    const size_t hit = literal.find("\\E", pos);
    if (hit == std::string_view::npos) {
      out.append(literal.substr(pos));
      break;
    }
    out.append(literal.substr(pos, hit - pos));
    out.append("\\E\\\\E\\Q");
    pos = hit + 2;
  }
  out.append("\\E");
  return out;
}

}  // namespace minimax
