// What the M2 and M3 tool-call parsers share (serve/tool_parser.h, serve/tool_parser_block.h).
#include "serve/tool_parser.h"

#include <algorithm>

#include "serve/marked_text.h"
#include "serve/tool_parser_block.h"

namespace minimax {

std::unique_ptr<ToolCallParser> make_tool_call_parser(ParserFormat format,
                                                      const ToolSchemas& schemas) {
  using Factory = std::unique_ptr<ToolCallParser> (*)(const ToolSchemas&);
  static constexpr Factory kFactories[] = {make_minimax_m2_tool_parser,  // ParserFormat's order
                                           make_minimax_m3_tool_parser};
  return kFactories[parser_format_index(format, "tool-call parser")](schemas);
}

std::string parse_name_attribute(std::string_view attribute) {
  std::string_view rest = trim_space(attribute);
  if (!rest.starts_with("name")) return "";
  rest = trim_space(rest.substr(4));
  if (!rest.starts_with("=")) return "";
  rest = trim_space(rest.substr(1));
  if (rest.empty()) return "";
  if (rest[0] == '"' || rest[0] == '\'') {
    const size_t close = rest.find(rest[0], 1);
    if (close == std::string_view::npos || !trim_space(rest.substr(close + 1)).empty()) return "";
    return std::string(rest.substr(1, close - 1));
  }
  for (char c : rest)
    if (is_space_char(c) || c == '"' || c == '\'') return "";
  return std::string(rest);
}

BlockToolParser::BlockToolParser(const ParserFormatSpec& spec, const ToolSchemas& schemas)
    : spec_(spec),
      schemas_(schemas),
      start_{spec.tool_marker, spec.tool_start_suffix},
      end_{spec.tool_end_marker, spec.tool_end_suffix} {}

void BlockToolParser::push(std::string_view marked, ToolParseOutput& out) {
  buf_.append(marked);
  run(out);
  // Drop what is released or committed; keep what may still matter.
  const size_t cut = state_ == State::kInBlock ? region_ : pos_;
  if (cut == 0) return;
  buf_.erase(0, cut);
  pos_ -= cut;
  if (state_ == State::kInBlock) {
    region_ -= cut;
    rebase(cut);
  }
}

void BlockToolParser::finish(ToolParseOutput& out) {
  if (state_ == State::kInBlock) {
    // An unclosed block keeps its calls; an unfinished invoke or stray text is content.
    if (calls_in_block_ == 0 || !only_space(region_, buf_.size())) emit(region_, buf_.size(), out);
  } else {
    emit(pos_, buf_.size(), out);  // a held possible block start, or pass-through text
  }
  buf_.clear();
  pos_ = region_ = 0;
  state_ = State::kOutside;
}

void BlockToolParser::run(ToolParseOutput& out) {
  while (true) {
    if (state_ == State::kInBlock) {
      parse_block(out);
      if (state_ == State::kInBlock) return;  // needs more input
      continue;
    }
    const Pattern& pattern = state_ == State::kOutside ? start_ : end_;
    const char byte = marker_byte(pattern.marker);
    const size_t at = buf_.find(byte, pos_);
    emit(pos_, at == std::string::npos ? buf_.size() : at, out);
    if (at == std::string::npos) {
      pos_ = buf_.size();
      return;
    }
    pos_ = at;
    size_t end = 0;
    const Match match = match_pattern(at, pattern, &end);
    if (match == Match::kPartial) return;  // hold from the marker on
    if (match == Match::kNo) {
      emit(at, at + 1, out);
      pos_ = at + 1;
      continue;
    }
    if (state_ == State::kOutside) {
      state_ = State::kInBlock;
      region_ = at;
      pos_ = end;
      calls_in_block_ = 0;
      on_block_start();
    } else {
      emit(at, end, out);  // the end tag of a block that failed is content too
      pos_ = end;
      state_ = State::kOutside;
    }
  }
}

void BlockToolParser::emit(size_t begin, size_t end, ToolParseOutput& out) const {
  if (begin < end)
    append_rendered(out.content, std::string_view(buf_).substr(begin, end - begin), spec_.markers);
}

void BlockToolParser::commit(size_t end, ParsedToolCall call, ToolParseOutput& out) {
  out.calls.push_back(std::move(call));
  ++calls_in_block_;
  region_ = pos_ = end;
}

void BlockToolParser::close_block(size_t end, ToolParseOutput& out) {
  if (calls_in_block_ == 0) emit(region_, end, out);
  region_ = pos_ = end;
  state_ = State::kOutside;
}

void BlockToolParser::fail(size_t at, ToolParseOutput& out) {
  emit(region_, at, out);
  region_ = pos_ = at;
  state_ = State::kPassThrough;
}

BlockToolParser::Match BlockToolParser::match_pattern(size_t at, const Pattern& pattern,
                                                      size_t* end) const {
  if (marker_number(buf_[at]) != pattern.marker) return Match::kNo;
  if (pattern.suffix.empty()) {
    *end = at + 1;
    return Match::kYes;
  }
  const size_t text = skip_space(at + 1);
  if (text == buf_.size()) return Match::kPartial;
  const Match match = match_literal(text, pattern.suffix);
  if (match == Match::kYes) *end = text + pattern.suffix.size();
  return match;
}

BlockToolParser::Match BlockToolParser::match_literal(size_t at, std::string_view literal) const {
  const size_t available = std::min(literal.size(), buf_.size() - at);
  if (std::string_view(buf_).substr(at, available) != literal.substr(0, available))
    return Match::kNo;
  return available == literal.size() ? Match::kYes : Match::kPartial;
}

size_t BlockToolParser::skip_space(size_t at) const {
  while (at < buf_.size() && is_space_char(buf_[at])) ++at;
  return at;
}

bool BlockToolParser::only_space(size_t begin, size_t end) const {
  for (size_t i = begin; i < end; ++i)
    if (!is_space_char(buf_[i])) return false;
  return true;
}

std::string BlockToolParser::rendered(size_t begin, size_t end) const {
  return render_marked(std::string_view(buf_).substr(begin, end - begin), spec_.markers);
}

}  // namespace minimax
