// Internal to the tool-call parsers: the part M2 and M3 share — a buffer of marked text, content
// outside blocks, block start and end patterns, releasing a block's text as content when it fails
// to parse — around a format-specific parser of a block's inside (tool_parser_m2.cc,
// tool_parser_m3.cc).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "serve/tool_parser.h"

namespace minimax {

class BlockToolParser : public ToolCallParser {
 public:
  void push(std::string_view marked, ToolParseOutput& out) final;
  void finish(ToolParseOutput& out) final;

 protected:
  // A marker followed, after optional whitespace, by plain text `suffix` ("" = the marker alone).
  struct Pattern {
    int marker;
    std::string suffix;
  };
  enum class Match { kYes, kNo, kPartial };

  // Block start and end patterns come from the spec (tool_marker/tool_start_suffix,
  // tool_end_marker/tool_end_suffix).
  BlockToolParser(const ParserFormatSpec& spec, const ToolSchemas& schemas);

  // Parses the block from pos_ as far as the buffer allows, calling commit / close_block / fail.
  // Returns when more input is needed or the block is over (in_block() false).
  virtual void parse_block(ToolParseOutput& out) = 0;
  virtual void on_block_start() = 0;
  // The buffer lost its first `cut` bytes: shift stored positions.
  virtual void rebase(size_t cut) = 0;

  bool in_block() const { return state_ == State::kInBlock; }
  // A complete call ending at `end`.
  void commit(size_t end, ParsedToolCall call, ToolParseOutput& out);
  // The block's end tag ends at `end`.
  void close_block(size_t end, ToolParseOutput& out);
  // Nothing from `at` on parses: release the block's text as content.
  void fail(size_t at, ToolParseOutput& out);

  // Helpers over buf_.
  Match match_pattern(size_t at, const Pattern& pattern, size_t* end) const;
  Match match_literal(size_t at, std::string_view literal) const;
  size_t skip_space(size_t at) const;
  bool only_space(size_t begin, size_t end) const;
  std::string rendered(size_t begin, size_t end) const;

  const ParserFormatSpec& spec_;
  const ToolSchemas& schemas_;
  const Pattern start_, end_;
  std::string buf_;  // marked text not yet released
  size_t pos_ = 0;   // parse position

 private:
  enum class State { kOutside, kInBlock, kPassThrough };
  void run(ToolParseOutput& out);
  void emit(size_t begin, size_t end, ToolParseOutput& out) const;

  State state_ = State::kOutside;
  size_t region_ = 0;  // in a block: start of the text neither committed nor released
  int calls_in_block_ = 0;
};

// The two grammars (tool_parser_m2.cc, tool_parser_m3.cc).
std::unique_ptr<ToolCallParser> make_minimax_m2_tool_parser(const ToolSchemas& schemas);
std::unique_ptr<ToolCallParser> make_minimax_m3_tool_parser(const ToolSchemas& schemas);

inline bool is_space_char(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Longest tag or attribute text read before a '>' (longer: malformed, so it is not held forever).
inline constexpr size_t kMaxTagLength = 1024;

}  // namespace minimax
