// Parser deltas (serve/parse_pipeline.h) → Anthropic content blocks: thinking, text and tool_use,
// in the order they were generated, as the stream's block events (content_block_start, then
// content_block_delta with thinking_delta / text_delta / input_json_delta, a thinking block's
// signature_delta, content_block_stop) and as the message's `content` array. Streamed and
// non-streamed replies are both built here from the same deltas, so they cannot disagree.
//
// Rules:
// - a block stays open while deltas of its kind arrive; another kind closes it and opens the next
//   (index 0, 1, …); every tool call is a block of its own;
// - whitespace-only text that would open a text block is held until other text follows (then it
//   starts the block) and dropped when none does: the newline a model writes between its
//   reasoning or a tool-call block and the end of its turn is not an answer;
// - a thinking block gets a signature (random, opaque: this server checks none it is sent back);
// - a tool_use block's input is the parser's arguments JSON, sent whole as one input_json_delta;
// - within one delta, reasoning comes first, then content, then tool calls: the parsers emit a
//   call in the delta of the token that completes it, so text after a call is in a later delta.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve/parse_pipeline.h"

namespace minimax {

class ContentBlocks {
 public:
  using Json = nlohmann::ordered_json;

  // Appends the events `delta` causes to `events` (objects with their "type").
  void add(const ParseDelta& delta, std::vector<Json>& events);
  // Closes the open block, if any; drops held whitespace.
  void finish(std::vector<Json>& events);

  // The message's content so far (complete after finish()): [{"type":"thinking","thinking",
  // "signature"} | {"type":"text","text"} | {"type":"tool_use","id","name","input"}].
  const Json& content() const { return content_; }
  bool has_tool_use() const { return tool_uses_ > 0; }

 private:
  enum class Kind { kNone, kThinking, kText, kToolUse };
  void open(Kind kind, Json block, std::vector<Json>& events);
  void close(std::vector<Json>& events);
  void delta(Json delta, std::vector<Json>& events);
  void add_text(const std::string& text, std::vector<Json>& events);

  Kind kind_ = Kind::kNone;
  std::string held_space_;  // whitespace waiting for a text block
  std::string tool_json_;   // the open tool_use block's input text
  int tool_uses_ = 0;
  Json content_ = Json::array();
};

// Anthropic's tool-use id for a parser call id ("call_<hex>" → "toolu_<hex>").
std::string tool_use_id(const std::string& call_id);

}  // namespace minimax
