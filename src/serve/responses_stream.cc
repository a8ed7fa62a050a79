// Parser deltas → Responses output items and their stream events (serve/responses_stream.h).
#include "serve/responses_stream.h"

#include "serve/openai_response.h"

namespace minimax {
namespace {

bool only_whitespace(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

// "fc_<hex>" for the item of tool call "call_<hex>": one random part names both.
std::string function_item_id(const std::string& call_id) {
  constexpr std::string_view kCall = "call_";
  if (call_id.starts_with(kCall)) return "fc_" + call_id.substr(kCall.size());
  return new_response_id("fc_");
}

}  // namespace

ResponseItems::Json ResponseItems::item_event(std::string_view type) const {
  const size_t index = output_.size() - 1;
  return {{"type", type}, {"item_id", output_[index]["id"]}, {"output_index", index}};
}

void ResponseItems::open(Kind kind, Json item, std::vector<Json>& events) {
  close(events);
  kind_ = kind;
  events.push_back(
      {{"type", "response.output_item.added"}, {"output_index", output_.size()}, {"item", item}});
  output_.push_back(std::move(item));
  if (kind == Kind::kFunctionCall) return;
  Json part = kind == Kind::kMessage
                  ? Json{{"type", "output_text"}, {"text", ""}, {"annotations", Json::array()}}
                  : Json{{"type", "reasoning_text"}, {"text", ""}};
  Json added = item_event("response.content_part.added");
  added["content_index"] = 0;
  added["part"] = std::move(part);
  events.push_back(std::move(added));
}

void ResponseItems::close(std::vector<Json>& events, std::string_view status) {
  if (kind_ == Kind::kNone) return;
  Json& item = output_.back();
  if (kind_ == Kind::kFunctionCall) {
    item["arguments"] = text_;
    Json done = item_event("response.function_call_arguments.done");
    done["name"] = item["name"];
    done["arguments"] = text_;
    events.push_back(std::move(done));
  } else {
    const bool message = kind_ == Kind::kMessage;
    Json part = message
                    ? Json{{"type", "output_text"}, {"text", text_}, {"annotations", Json::array()}}
                    : Json{{"type", "reasoning_text"}, {"text", text_}};
    Json done = item_event(message ? "response.output_text.done" : "response.reasoning_text.done");
    done["content_index"] = 0;
    done["text"] = text_;
    if (message) done["logprobs"] = Json::array();
    events.push_back(std::move(done));
    Json part_done = item_event("response.content_part.done");
    part_done["content_index"] = 0;
    part_done["part"] = part;
    events.push_back(std::move(part_done));
    item["content"] = Json::array({std::move(part)});
  }
  item["status"] = status;
  events.push_back({{"type", "response.output_item.done"},
                    {"output_index", output_.size() - 1},
                    {"item", item}});
  text_.clear();
  kind_ = Kind::kNone;
}

void ResponseItems::add_text(Kind kind, const std::string& text, std::vector<Json>& events) {
  if (text.empty()) return;
  std::string delta = text;
  if (kind_ != kind) {
    if (kind == Kind::kMessage) {
      held_space_ += text;
      if (only_whitespace(held_space_)) return;
      delta = std::move(held_space_);
      held_space_.clear();
      open(kind,
           {{"id", new_response_id("msg_")},
            {"type", "message"},
            {"status", "in_progress"},
            {"role", "assistant"},
            {"content", Json::array()}},
           events);
    } else {
      held_space_.clear();  // whitespace before more reasoning separates nothing in the answer
      open(kind,
           {{"id", new_response_id("rs_")},
            {"type", "reasoning"},
            {"summary", Json::array()},
            {"content", Json::array()},
            {"status", "in_progress"}},
           events);
    }
  }
  text_ += delta;
  Json event = item_event(kind == Kind::kMessage ? "response.output_text.delta"
                                                 : "response.reasoning_text.delta");
  event["content_index"] = 0;
  event["delta"] = std::move(delta);
  if (kind == Kind::kMessage) event["logprobs"] = Json::array();
  events.push_back(std::move(event));
}

void ResponseItems::add(const ParseDelta& parsed, std::vector<Json>& events) {
  add_text(Kind::kReasoning, parsed.reasoning, events);
  add_text(Kind::kMessage, parsed.content, events);
  for (const ToolCallDelta& call : parsed.tool_calls) {
    if (!call.id.empty()) {
      held_space_.clear();
      open(Kind::kFunctionCall,
           {{"id", function_item_id(call.id)},
            {"type", "function_call"},
            {"status", "in_progress"},
            {"call_id", call.id},
            {"name", call.name},
            {"arguments", ""}},
           events);
      ++calls_;
    }
    if (kind_ != Kind::kFunctionCall || call.arguments.empty()) continue;
    text_ += call.arguments;
    Json event = item_event("response.function_call_arguments.delta");
    event["delta"] = call.arguments;
    events.push_back(std::move(event));
  }
}

void ResponseItems::finish(std::vector<Json>& events, std::string_view status) {
  held_space_.clear();
  close(events, status);
}

}  // namespace minimax
