// The prompt of a chat request: its messages rendered with the chat template, message text
// protected so that only the template's markup becomes control tokens (text/control_text.h).
// Shared by the handlers that need a chat request's prompt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/text_model.h"
#include "serve/openai_request.h"
#include "serve/parser_format.h"

namespace minimax {

// The rendered conversation (message text holds placeholders: encode it with
// model.control_guard().encode). continue_final_message leaves the last assistant turn open.
// Template errors → ApiException 400 naming `messages`.
std::string render_prompt(const TextModel& model, const ChatRequest& request, ParserFormat format);

}  // namespace minimax
