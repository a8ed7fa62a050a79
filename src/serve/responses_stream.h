// Parser deltas (serve/parse_pipeline.h) → the Responses API's output items: `reasoning`
// ({"content":[{"type":"reasoning_text","text"}],"summary":[]}, as vLLM returns it), `message`
// (one output_text part) and `function_call` ({"call_id","name","arguments"}), in the order they
// were generated, as the stream's item events and as the response's `output` array. Streamed and
// non-streamed replies are both built here from the same deltas, so they cannot disagree.
//
// Events (each an object with its "type"; the sink adds sequence_number when it writes it):
//   response.output_item.added, then per kind
//     reasoning: response.content_part.added, response.reasoning_text.delta…,
//                response.reasoning_text.done, response.content_part.done
//     message:   response.content_part.added, response.output_text.delta…,
//                response.output_text.done, response.content_part.done
//     function_call: response.function_call_arguments.delta…,
//                    response.function_call_arguments.done
//   response.output_item.done.
// Rules (as serve/anthropic_stream.h): an item stays open while deltas of its kind arrive;
// another kind closes it; every tool call is an item of its own; whitespace-only text that would
// open a message is held until other text follows and dropped when none does (the newline between
// the reasoning or a tool call and the end of the turn is not an answer).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "serve/parse_pipeline.h"

namespace minimax {

class ResponseItems {
 public:
  using Json = nlohmann::ordered_json;

  // Appends the events `delta` causes to `events`.
  void add(const ParseDelta& delta, std::vector<Json>& events);
  // Closes the open item with `status` ("completed", or "incomplete" when max_output_tokens cut
  // it off); drops held whitespace.
  void finish(std::vector<Json>& events, std::string_view status = "completed");

  // The items so far (complete after finish()).
  const Json& output() const { return output_; }
  bool has_function_call() const { return calls_ > 0; }

 private:
  enum class Kind { kNone, kReasoning, kMessage, kFunctionCall };
  void open(Kind kind, Json item, std::vector<Json>& events);
  void close(std::vector<Json>& events, std::string_view status = "completed");
  void add_text(Kind kind, const std::string& text, std::vector<Json>& events);
  Json item_event(std::string_view type) const;

  Kind kind_ = Kind::kNone;
  std::string held_space_;  // whitespace waiting for a message
  std::string text_;        // the open item's text or arguments
  int calls_ = 0;
  Json output_ = Json::array();
};

}  // namespace minimax
