// The parsers as the server uses them: generated text (or tokens) in, OpenAI-shaped deltas out —
// reasoning text, content text, tool-call deltas (spec/parsers.md §4, §5). The same machine
// serves streaming (push each delta, then finish) and non-streaming requests (parse_output), so
// the two can never disagree: the concatenated deltas of any chunking equal the whole-output
// result, tool-call arguments included, byte for byte.
//
//   marker lexer (token ids or spellings → marked text)
//     → reasoning parser (reasoning | content)   [optional: --reasoning-parser none]
//     → tool-call parser (content | calls)       [optional: --tool-call-parser none]
//
// Server use: pick the format; decide `initial` with initial_reasoning_state() from the prompt
// (its generation prefix only) and the request's chat_template_kwargs; build ToolSchemas from the
// request's tools; per generated token call push_token(id, detokenized text with the markers'
// special tokens kept; other special tokens may be dropped: skip_special_tokens); at the end call
// finish(); result() then holds the whole message. finish_reason is
// "tool_calls" when result().tool_calls is not empty.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "serve/marked_text.h"
#include "serve/parser_format.h"
#include "serve/reasoning_parser.h"
#include "serve/schema_coerce.h"
#include "serve/tool_parser.h"
#include "text/bpe_tokenizer.h"

namespace minimax {

struct ParserOptions {
  ParserFormat format = ParserFormat::kMinimaxM2;
  bool parse_reasoning = true;  // false: everything is content
  // With parse_reasoning false: the first delta's content starts with the opening think marker,
  // which the chat template wrote into the prompt (vLLM's minimax_m2_append_think), so a client
  // that splits <think>...</think> itself sees the whole block.
  bool append_think = false;
  bool parse_tool_calls = true;  // false: tool-call markup stays in content
  ReasoningState initial = ReasoningState::kReasoning;
  nlohmann::json tools;  // the request's `tools` array (value types come from it); may be null
  // Tool-call ids are "call_" + 24 hex digits, random by default; with a seed they are a
  // function of the seed and the call's index (for tests and reproducible runs).
  std::optional<uint64_t> id_seed;
};

// One tool-call delta in the OpenAI shape: id and name on the call's first delta, then argument
// fragments. The fragments of a call concatenate to its arguments JSON.
struct ToolCallDelta {
  int index = 0;
  std::string id;    // "" after the first delta
  std::string name;  // "" after the first delta
  std::string arguments;
};

struct ParseDelta {
  std::string reasoning;
  std::string content;
  std::vector<ToolCallDelta> tool_calls;
  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;  // JSON object text
};

// A whole message. reasoning / content are nullopt when empty (the OpenAI null).
struct ParseResult {
  std::optional<std::string> reasoning;
  std::optional<std::string> content;
  std::vector<ToolCall> tool_calls;
};

// Folds deltas into a message, as a client does.
class DeltaAccumulator {
 public:
  void add(const ParseDelta& delta);
  ParseResult result() const;

 private:
  std::string reasoning_, content_;
  std::vector<ToolCall> calls_;
};

class ParsePipeline {
 public:
  // Markers detected by their spelling in the text.
  explicit ParsePipeline(ParserOptions options);
  // Markers detected by token id (preferred when ids are at hand: text that merely spells a
  // marker is then text). Throws Error when a marker is not a single token of `tokenizer`.
  ParsePipeline(ParserOptions options, const BpeTokenizer& tokenizer);
  ~ParsePipeline();
  ParsePipeline(ParsePipeline&&) noexcept;

  ParseDelta push_text(std::string_view text);
  ParseDelta push_token(int32_t id, std::string_view text);
  ParseDelta finish();

  // Everything emitted so far; the whole message after finish().
  ParseResult result() const { return accumulated_.result(); }
  // Whether generated text is currently classified as reasoning.
  bool in_reasoning() const;

 private:
  ParseDelta run(std::string marked, bool final);
  std::string next_call_id();

  ParserOptions options_;
  const ParserFormatSpec* spec_;
  std::unique_ptr<ToolSchemas> schemas_;  // stable address: the tool parser points into it
  MarkerLexer lexer_;
  std::unique_ptr<ReasoningParser> reasoning_;
  std::unique_ptr<ToolCallParser> tools_;
  std::mt19937_64 random_ids_;
  int calls_ = 0;
  bool think_appended_ = false;
  DeltaAccumulator accumulated_;
};

// Non-streaming: the whole output at once.
ParseResult parse_output(std::string_view output, const ParserOptions& options);
ParseResult parse_output_tokens(std::span<const int32_t> ids, const BpeTokenizer& tokenizer,
                                const ParserOptions& options);

}  // namespace minimax
