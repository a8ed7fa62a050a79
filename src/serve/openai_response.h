// Typed results → OpenAI response JSON (spec/parsers.md §5): chat completions and their stream
// chunks, text completions and theirs, chat and legacy logprobs, vLLM's prompt_logprobs, the model
// list, SSE framing. Inputs are small structs of this file (the server maps engine events to
// them), parser deltas and results. Objects are ordered_json so key order is stable; text is
// serialised with invalid UTF-8 replaced by U+FFFD (a token may end inside a character), while
// logprob `bytes` carry the exact bytes.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "serve/api_error.h"
#include "serve/parse_pipeline.h"

namespace minimax {

// What every chunk and response of one request shares.
struct ResponseMeta {
  std::string id;       // "chatcmpl-…" / "cmpl-…" (new_response_id)
  int64_t created = 0;  // unix seconds
  std::string model;
};

// `prefix` + 32 random hex digits, e.g. new_response_id("chatcmpl-").
std::string new_response_id(std::string_view prefix);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // prompt tokens served from the prefix cache
};
// {"prompt_tokens","completion_tokens","total_tokens","prompt_tokens_details":{"cached_tokens"}}
nlohmann::ordered_json usage_json(const Usage& usage);

// ---- Logprobs -------------------------------------------------------------------------------

struct TopLogprob {
  std::string token;  // the token's text (raw bytes; may be a partial UTF-8 character)
  float logprob = 0;  // -inf is reported as -9999.0, as vLLM does
};

struct TokenLogprobs {
  std::string token;
  float logprob = 0;
  std::vector<TopLogprob> top;
  // False for a token without a logprob: the first prompt token of an echoed completion (legacy
  // logprobs then hold null for it). Chat ignores it.
  bool scored = true;
};

// {"content":[{"token","logprob","bytes":[…],"top_logprobs":[{"token","logprob","bytes"}]}]}
nlohmann::ordered_json chat_logprobs_json(std::span<const TokenLogprobs> tokens);

// Legacy completions logprobs {"tokens","token_logprobs","top_logprobs","text_offset"};
// top_logprobs entries are {text: logprob} objects (null for an unscored token); text_offset
// counts characters (code points, as vLLM) from `first_offset`, the offset of the first token
// in the choice's text.
nlohmann::ordered_json completion_logprobs_json(std::span<const TokenLogprobs> tokens,
                                                int64_t first_offset = 0);

struct PromptLogprobEntry {
  int32_t token = 0;
  std::string text;  // decoded token
  float logprob = 0;
  int rank = 0;  // 1 = most probable
};
// One prompt position: the actual prompt token and the top-n alternatives (rank = index + 1).
struct PromptTokenLogprobs {
  PromptLogprobEntry actual;
  std::vector<PromptLogprobEntry> top;
};
// vLLM's prompt_logprobs: [null, {"<id>": {"logprob","rank","decoded_token"}, …}, …]; nullopt
// positions (the first) are null; the actual token comes first, then the top-n not equal to it.
nlohmann::ordered_json prompt_logprobs_json(
    std::span<const std::optional<PromptTokenLogprobs>> positions);

// ---- Chat -----------------------------------------------------------------------------------

// "tool_calls" when the message has tool calls and the engine stopped ("stop"), else the
// engine's reason ("length" stays "length").
std::string chat_finish_reason(std::string_view engine_reason, bool has_tool_calls);

// Streaming. Every chunk is {"id","object":"chat.completion.chunk","created","model",
// "choices":[{"index","delta","logprobs","finish_reason"}],"usage":null}; set chunk["usage"]
// yourself for continuous_usage_stats.
// First chunk of a choice: delta {"role":"assistant","content":""}.
nlohmann::ordered_json chat_role_chunk(const ResponseMeta& meta, int index);
// The chunks for one parser delta: reasoning / content in one chunk (reasoning as both
// "reasoning_content" and "reasoning"), then per tool call a header chunk {"index","id",
// "type":"function","function":{"name","arguments":""}} and, when there are arguments, an
// arguments chunk {"index","function":{"arguments"}}. `logprobs` (tokens since the last call)
// ride on the first chunk; an empty delta with logprobs gives one chunk with delta {} so that no
// logprob is lost; an empty delta without gives no chunk.
std::vector<nlohmann::ordered_json> chat_delta_chunks(const ResponseMeta& meta, int index,
                                                      const ParseDelta& delta,
                                                      std::span<const TokenLogprobs> logprobs = {},
                                                      bool with_logprobs = false);
// delta {} with the finish reason.
nlohmann::ordered_json chat_finish_chunk(const ResponseMeta& meta, int index,
                                         std::string_view finish_reason);
// "choices":[] and the usage (stream_options.include_usage).
nlohmann::ordered_json chat_usage_chunk(const ResponseMeta& meta, const Usage& usage);

struct ChatChoice {
  int index = 0;
  ParseResult message;
  std::string finish_reason;
  std::optional<std::vector<TokenLogprobs>> logprobs;  // nullopt → "logprobs": null
};
// {"id","object":"chat.completion","created","model","choices":[{"index","message":{"role":
// "assistant","content":str|null,"reasoning_content":str|null,"reasoning":str|null[,
// "tool_calls":[{"id","type":"function","function":{"name","arguments"}}]]},"logprobs",
// "finish_reason"}],"usage"[,"prompt_logprobs"]}; prompt_logprobs only when given.
nlohmann::ordered_json chat_completion_json(
    const ResponseMeta& meta, std::span<const ChatChoice> choices, const Usage& usage,
    const std::optional<nlohmann::ordered_json>& prompt_logprobs = std::nullopt);

// ---- Completions ----------------------------------------------------------------------------

struct CompletionChoice {
  int index = 0;
  std::string text;
  std::string finish_reason;                       // "" → null (streaming chunks before the end)
  std::optional<nlohmann::ordered_json> logprobs;  // completion_logprobs_json(...) or null
};
// {"id","object":"text_completion","created","model","choices":[{"index","text","logprobs",
// "finish_reason"[,"prompt_logprobs"]}],"usage"}; prompt_logprobs in every choice, as vLLM does.
nlohmann::ordered_json completion_json(
    const ResponseMeta& meta, std::span<const CompletionChoice> choices, const Usage& usage,
    const std::optional<nlohmann::ordered_json>& prompt_logprobs = std::nullopt);
// Streaming chunk: the same object with one choice and "usage":null.
nlohmann::ordered_json completion_chunk(const ResponseMeta& meta, const CompletionChoice& choice);
// "choices":[] and the usage.
nlohmann::ordered_json completion_usage_chunk(const ResponseMeta& meta, const Usage& usage);

// ---- Models, serialisation, SSE -------------------------------------------------------------

struct ModelCard {
  std::string id;
  int64_t created = 0;
  int64_t max_model_len = 0;
};
// {"object":"list","data":[{"id","object":"model","created","owned_by":"minimax.cpp",
// "max_model_len"}]}
nlohmann::ordered_json models_json(std::span<const ModelCard> models);

// Compact JSON text; invalid UTF-8 in strings becomes U+FFFD instead of throwing.
std::string json_text(const nlohmann::ordered_json& value);
// "data: <json>\n\n"
std::string sse_event(const nlohmann::ordered_json& value);
// "data: [DONE]\n\n"
std::string sse_done();
// "data: {"error":{…}}\n\n" — a mid-stream error; follow it with sse_done().
std::string sse_error(const ApiError& error);

}  // namespace minimax
