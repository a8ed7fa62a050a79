// OpenAI response objects, stream chunks, logprobs and SSE framing (shapes: openai_response.h).
#include "serve/openai_response.h"

#include <fmt/format.h>

#include <cmath>
#include <random>
#include <utility>

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

// vLLM reports -inf (a token the filters removed) as -9999.0: JSON has no infinity.
double finite_logprob(float logprob) {
  return std::isfinite(logprob) ? static_cast<double>(logprob) : -9999.0;
}

Json token_bytes(const std::string& token) {
  Json bytes = Json::array();
  for (unsigned char c : token) bytes.push_back(static_cast<int>(c));
  return bytes;
}

// Code points in UTF-8 text: bytes that do not continue a character.
int64_t count_chars(const std::string& text) {
  int64_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

Json optional_text(const std::optional<std::string>& text) {
  return text ? Json(*text) : Json(nullptr);
}

Json header(const ResponseMeta& meta, std::string_view object) {
  Json out;
  out["id"] = meta.id;
  out["object"] = object;
  out["created"] = meta.created;
  out["model"] = meta.model;
  return out;
}

Json chat_chunk(const ResponseMeta& meta, int index, Json delta, Json logprobs,
                Json finish_reason) {
  Json choice;
  choice["index"] = index;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = std::move(logprobs);
  choice["finish_reason"] = std::move(finish_reason);
  Json out = header(meta, "chat.completion.chunk");
  out["choices"] = Json::array({std::move(choice)});
  out["usage"] = nullptr;
  return out;
}

Json usage_chunk(const ResponseMeta& meta, std::string_view object, const Usage& usage) {
  Json out = header(meta, object);
  out["choices"] = Json::array();
  out["usage"] = usage_json(usage);
  return out;
}

Json prompt_entry(const PromptLogprobEntry& entry) {
  Json out;
  out["logprob"] = finite_logprob(entry.logprob);
  out["rank"] = entry.rank;
  out["decoded_token"] = entry.text;
  return out;
}

}  // namespace

std::string new_response_id(std::string_view prefix) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  return fmt::format("{}{:016x}{:016x}", prefix, random(), random());
}

Json usage_json(const Usage& usage) {
  Json out;
  out["prompt_tokens"] = usage.prompt_tokens;
  out["completion_tokens"] = usage.completion_tokens;
  out["total_tokens"] = usage.prompt_tokens + usage.completion_tokens;
  out["prompt_tokens_details"] = {{"cached_tokens", usage.cached_tokens}};
  return out;
}

Json chat_logprobs_json(std::span<const TokenLogprobs> tokens) {
  Json content = Json::array();
  for (const TokenLogprobs& t : tokens) {
    Json top = Json::array();
    for (const TopLogprob& alt : t.top) {
      Json entry;
      entry["token"] = alt.token;
      entry["logprob"] = finite_logprob(alt.logprob);
      entry["bytes"] = token_bytes(alt.token);
      top.push_back(std::move(entry));
    }
    Json entry;
    entry["token"] = t.token;
    entry["logprob"] = finite_logprob(t.logprob);
    entry["bytes"] = token_bytes(t.token);
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  Json out;
  out["content"] = std::move(content);
  return out;
}

Json completion_logprobs_json(std::span<const TokenLogprobs> tokens, int64_t first_offset) {
  Json text_tokens = Json::array(), logprobs = Json::array(), tops = Json::array(),
       offsets = Json::array();
  int64_t offset = first_offset;
  for (const TokenLogprobs& t : tokens) {
    text_tokens.push_back(t.token);
    offsets.push_back(offset);
    offset += count_chars(t.token);
    if (!t.scored) {
      logprobs.push_back(nullptr);
      tops.push_back(nullptr);
      continue;
    }
    logprobs.push_back(finite_logprob(t.logprob));
    // Keyed by text, so alternatives that decode alike collapse (the first, most probable, wins).
    Json top = Json::object();
    for (const TopLogprob& alt : t.top) {
      if (!top.contains(alt.token)) top[alt.token] = finite_logprob(alt.logprob);
    }
    tops.push_back(std::move(top));
  }
  Json out;
  out["tokens"] = std::move(text_tokens);
  out["token_logprobs"] = std::move(logprobs);
  out["top_logprobs"] = std::move(tops);
  out["text_offset"] = std::move(offsets);
  return out;
}

Json prompt_logprobs_json(std::span<const std::optional<PromptTokenLogprobs>> positions) {
  Json out = Json::array();
  for (const auto& position : positions) {
    if (!position) {
      out.push_back(nullptr);
      continue;
    }
    Json entry = Json::object();
    entry[std::to_string(position->actual.token)] = prompt_entry(position->actual);
    for (const PromptLogprobEntry& alt : position->top) {
      std::string key = std::to_string(alt.token);
      if (!entry.contains(key)) entry[key] = prompt_entry(alt);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

std::string chat_finish_reason(std::string_view engine_reason, bool has_tool_calls) {
  if (has_tool_calls && engine_reason == "stop") return "tool_calls";
  return std::string(engine_reason);
}

Json chat_role_chunk(const ResponseMeta& meta, int index) {
  Json delta;
  delta["role"] = "assistant";
  delta["content"] = "";
  return chat_chunk(meta, index, std::move(delta), nullptr, nullptr);
}

std::vector<Json> chat_delta_chunks(const ResponseMeta& meta, int index, const ParseDelta& delta,
                                    std::span<const TokenLogprobs> logprobs, bool with_logprobs) {
  std::vector<Json> chunks;
  bool logprobs_pending = with_logprobs && !logprobs.empty();
  auto take_logprobs = [&]() -> Json {
    if (!logprobs_pending) return nullptr;
    logprobs_pending = false;
    return chat_logprobs_json(logprobs);
  };
  if (!delta.reasoning.empty() || !delta.content.empty()) {
    Json d = Json::object();
    if (!delta.reasoning.empty()) {
      d["reasoning_content"] = delta.reasoning;
      d["reasoning"] = delta.reasoning;
    }
    if (!delta.content.empty()) d["content"] = delta.content;
    chunks.push_back(chat_chunk(meta, index, std::move(d), take_logprobs(), nullptr));
  }
  for (const ToolCallDelta& call : delta.tool_calls) {
    if (!call.id.empty() || !call.name.empty()) {
      Json entry;
      entry["index"] = call.index;
      entry["id"] = call.id;
      entry["type"] = "function";
      entry["function"] = {{"name", call.name}, {"arguments", ""}};
      Json d;
      d["tool_calls"] = Json::array({std::move(entry)});
      chunks.push_back(chat_chunk(meta, index, std::move(d), take_logprobs(), nullptr));
    }
    if (!call.arguments.empty()) {
      Json entry;
      entry["index"] = call.index;
      entry["function"] = {{"arguments", call.arguments}};
      Json d;
      d["tool_calls"] = Json::array({std::move(entry)});
      chunks.push_back(chat_chunk(meta, index, std::move(d), take_logprobs(), nullptr));
    }
  }
  if (logprobs_pending) {
    chunks.push_back(chat_chunk(meta, index, Json::object(), take_logprobs(), nullptr));
  }
  return chunks;
}

Json chat_finish_chunk(const ResponseMeta& meta, int index, std::string_view finish_reason) {
  return chat_chunk(meta, index, Json::object(), nullptr, finish_reason);
}

Json chat_usage_chunk(const ResponseMeta& meta, const Usage& usage) {
  return usage_chunk(meta, "chat.completion.chunk", usage);
}

Json chat_completion_json(const ResponseMeta& meta, std::span<const ChatChoice> choices,
                          const Usage& usage, const std::optional<Json>& prompt_logprobs) {
  Json out = header(meta, "chat.completion");
  Json list = Json::array();
  for (const ChatChoice& c : choices) {
    Json message;
    message["role"] = "assistant";
    message["content"] = optional_text(c.message.content);
    message["reasoning_content"] = optional_text(c.message.reasoning);
    message["reasoning"] = optional_text(c.message.reasoning);
    if (!c.message.tool_calls.empty()) {
      Json calls = Json::array();
      for (const ToolCall& call : c.message.tool_calls) {
        Json entry;
        entry["id"] = call.id;
        entry["type"] = "function";
        entry["function"] = {{"name", call.name}, {"arguments", call.arguments}};
        calls.push_back(std::move(entry));
      }
      message["tool_calls"] = std::move(calls);
    }
    Json choice;
    choice["index"] = c.index;
    choice["message"] = std::move(message);
    choice["logprobs"] = c.logprobs ? chat_logprobs_json(*c.logprobs) : Json(nullptr);
    choice["finish_reason"] = c.finish_reason;
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  if (prompt_logprobs) out["prompt_logprobs"] = *prompt_logprobs;
  return out;
}

namespace {
Json completion_choice(const CompletionChoice& c) {
  Json choice;
  choice["index"] = c.index;
  choice["text"] = c.text;
  choice["logprobs"] = c.logprobs ? *c.logprobs : Json(nullptr);
  choice["finish_reason"] = c.finish_reason.empty() ? Json(nullptr) : Json(c.finish_reason);
  return choice;
}
}  // namespace

Json completion_json(const ResponseMeta& meta, std::span<const CompletionChoice> choices,
                     const Usage& usage, const std::optional<Json>& prompt_logprobs) {
  Json out = header(meta, "text_completion");
  Json list = Json::array();
  for (const CompletionChoice& c : choices) {
    Json choice = completion_choice(c);
    // vLLM puts a completion's prompt logprobs in each choice (chat has them at the top level).
    if (prompt_logprobs) choice["prompt_logprobs"] = *prompt_logprobs;
    list.push_back(std::move(choice));
  }
  out["choices"] = std::move(list);
  out["usage"] = usage_json(usage);
  return out;
}

Json completion_chunk(const ResponseMeta& meta, const CompletionChoice& choice) {
  Json out = header(meta, "text_completion");
  out["choices"] = Json::array({completion_choice(choice)});
  out["usage"] = nullptr;
  return out;
}

Json completion_usage_chunk(const ResponseMeta& meta, const Usage& usage) {
  return usage_chunk(meta, "text_completion", usage);
}

Json models_json(std::span<const ModelCard> models) {
  Json data = Json::array();
  for (const ModelCard& m : models) {
    Json card;
    card["id"] = m.id;
    card["object"] = "model";
    card["created"] = m.created;
    card["owned_by"] = "minimax.cpp";
    card["max_model_len"] = m.max_model_len;
    data.push_back(std::move(card));
  }
  Json out;
  out["object"] = "list";
  out["data"] = std::move(data);
  return out;
}

std::string json_text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string sse_event(const Json& value) { return "data: " + json_text(value) + "\n\n"; }

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string sse_error(const ApiError& error) { return "data: " + error_body(error) + "\n\n"; }

}  // namespace minimax
