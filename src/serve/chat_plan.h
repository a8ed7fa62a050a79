// A chat request made ready for the engine (internal to src/serve): the rendered and tokenized
// prompt, how its output is parsed (reasoning state at the start, tools), and the grammar the
// answer must follow (tool_choice required / named, response_format). Shared by the OpenAI chat
// handler and the Anthropic messages handler, so that both APIs render, constrain and parse a
// conversation the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/engine.h"
#include "runtime/text_model.h"
#include "serve/openai_request.h"
#include "serve/openai_service.h"
#include "serve/parse_pipeline.h"
#include "serve/service_requests.h"

namespace minimax {

struct ChatPlan {
  ParserOptions parser;  // format, tools, and the state the output starts in
  // prompt, default_max_tokens, timeout, prompt_logprobs, and the constraint: the answer grammar,
  // preceded by free reasoning that must end with its marker when the output starts reasoning.
  ChoiceSpec spec;
  // What follows the reasoning must be a sentence of this grammar (null: free). A continuation
  // that starts after the reasoning (the Anthropic thinking budget) is constrained by it alone.
  std::shared_ptr<const Grammar> answer_grammar;
  // The format's marker tokens: special tokens that still add their text (VisibleText) because the
  // parsers consume them.
  std::vector<int32_t> marker_ids;
};

// Renders (chat template, message text protected), tokenizes and plans `request`. Bad template
// variables, a tool the format cannot carry, or response_format with a forced tool call → 400.
ChatPlan plan_chat(const TextModel& model, const Engine& engine, const ServiceOptions& options,
                   const ChatRequest& request);

// A parser that knows the markers by token id, or by spelling when the tokenizer lacks them.
std::unique_ptr<ParsePipeline> make_parser(const ParserOptions& options,
                                           const BpeTokenizer& tokenizer);

}  // namespace minimax
