// Parser deltas → Anthropic content blocks and their stream events (serve/anthropic_stream.h).
#include "serve/anthropic_stream.h"

#include <fmt/format.h>

#include <random>

namespace minimax {
namespace {

bool all_space(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

std::string new_signature() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", random(), random());
}

}  // namespace

std::string tool_use_id(const std::string& call_id) {
  constexpr std::string_view kCall = "call_";
  if (call_id.starts_with(kCall)) return "toolu_" + call_id.substr(kCall.size());
  return call_id;
}

void ContentBlocks::open(Kind kind, Json block, std::vector<Json>& events) {
  close(events);
  kind_ = kind;
  Json start;
  start["type"] = "content_block_start";
  start["index"] = content_.size();
  start["content_block"] = block;
  events.push_back(std::move(start));
  content_.push_back(std::move(block));
}

void ContentBlocks::close(std::vector<Json>& events) {
  if (kind_ == Kind::kNone) return;
  const size_t index = content_.size() - 1;
  Json& block = content_[index];
  if (kind_ == Kind::kThinking) {
    block["signature"] = new_signature();
    events.push_back({{"type", "content_block_delta"},
                      {"index", index},
                      {"delta", {{"type", "signature_delta"}, {"signature", block["signature"]}}}});
  } else if (kind_ == Kind::kToolUse) {
    // The parser's arguments are a JSON object's text; `input` is the object.
    Json input = Json::parse(tool_json_.empty() ? "{}" : tool_json_, nullptr, false);
    block["input"] = input.is_object() ? input : Json::object();
    tool_json_.clear();
  }
  events.push_back({{"type", "content_block_stop"}, {"index", index}});
  kind_ = Kind::kNone;
}

void ContentBlocks::delta(Json delta, std::vector<Json>& events) {
  events.push_back({{"type", "content_block_delta"},
                    {"index", content_.size() - 1},
                    {"delta", std::move(delta)}});
}

void ContentBlocks::add_text(const std::string& text, std::vector<Json>& events) {
  if (text.empty()) return;
  if (kind_ != Kind::kText) {
    held_space_ += text;
    if (all_space(held_space_)) return;
    open(Kind::kText, {{"type", "text"}, {"text", ""}}, events);
    const std::string start = std::move(held_space_);
    held_space_.clear();
    content_.back()["text"] = start;
    delta({{"type", "text_delta"}, {"text", start}}, events);
    return;
  }
  content_.back()["text"].get_ref<std::string&>() += text;
  delta({{"type", "text_delta"}, {"text", text}}, events);
}

void ContentBlocks::add(const ParseDelta& parsed, std::vector<Json>& events) {
  if (!parsed.reasoning.empty()) {
    held_space_.clear();  // whitespace before more reasoning separates nothing in the answer
    if (kind_ != Kind::kThinking)
      open(Kind::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}, events);
    content_.back()["thinking"].get_ref<std::string&>() += parsed.reasoning;
    delta({{"type", "thinking_delta"}, {"thinking", parsed.reasoning}}, events);
  }
  add_text(parsed.content, events);
  for (const ToolCallDelta& call : parsed.tool_calls) {
    if (!call.id.empty()) {
      held_space_.clear();
      open(Kind::kToolUse,
           {{"type", "tool_use"},
            {"id", tool_use_id(call.id)},
            {"name", call.name},
            {"input", Json::object()}},
           events);
      ++tool_uses_;
    }
    if (kind_ != Kind::kToolUse || call.arguments.empty()) continue;
    tool_json_ += call.arguments;
    delta({{"type", "input_json_delta"}, {"partial_json", call.arguments}}, events);
  }
}

void ContentBlocks::finish(std::vector<Json>& events) {
  held_space_.clear();
  close(events);
}

}  // namespace minimax
