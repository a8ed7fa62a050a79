// Helpers shared by the gate implementations.
#include "gates/gate_common.h"

#include <fmt/format.h>

namespace minimax::gates {

nlohmann::ordered_json chat_request(const std::string& user, const Thresholds& thresholds) {
  using ojson = nlohmann::ordered_json;
  return {{"messages", ojson::array({{{"role", "user"}, {"content", user}}})},
          {"max_tokens", thresholds.max_tokens},
          {"temperature", 0}};
}

namespace detail {

std::string excerpt(std::string_view text, size_t limit) {
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < limit; ++i) {
    if (text[i] == '\n')
      out += "\\n";
    else
      out += text[i];
  }
  if (out.size() >= limit && text.size() > limit) out += "...";
  return out;
}

TaskOutcome ask(const OpenAiClient& server, const ChatTask& task, const GateOptions& options) {
  TaskOutcome outcome;
  try {
    const ChatAnswer answer =
        read_chat_answer(server.chat(chat_request(task.user, options.thresholds)));
    outcome.ok = true;
    outcome.answer = final_answer_text(answer.content, options.markers.think_closes);
    outcome.reasoning = answer.reasoning;
  } catch (const ConnectionError&) {
    throw;
  } catch (const Error& e) {
    outcome.error = e.what();
  }
  return outcome;
}

std::string mismatch(const ChatTask& task, const TaskOutcome& outcome) {
  // Needle prompts are long; their question is at the end.
  const std::string_view user = task.user;
  const size_t question = user.rfind("\n\n");
  const std::string shown = task.kind == "needles" && question != std::string_view::npos
                                ? "..." + excerpt(user.substr(question + 2))
                                : excerpt(user);
  if (!outcome.ok) return fmt::format("{} '{}': {}", task.kind, shown, outcome.error);
  return fmt::format("{} '{}': expected '{}', got '{}'", task.kind, shown,
                     excerpt(task.expected_content), excerpt(outcome.answer));
}

}  // namespace detail
}  // namespace minimax::gates
