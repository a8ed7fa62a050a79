// The tool-call gate: a request offering the spec's tools must come back as one call with the
// expected arguments, and the tool result round trip must give the expected answer.
#include <fmt/format.h>

#include "gates/gate_common.h"
#include "gates/gates.h"

namespace minimax::gates {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// Checks round 1; returns "" when the call is right, else why not. `call_id` gets the server's
// id when there is one.
std::string check_call(const ChatAnswer& answer, const ToolProblem& problem,
                       const ChatMarkers& markers, std::string* call_id) {
  if (answer.finish_reason != "tool_calls")
    return fmt::format("finish_reason '{}', expected 'tool_calls'", answer.finish_reason);
  if (answer.tool_calls.size() != 1)
    return fmt::format("{} tool calls, expected 1", answer.tool_calls.size());
  const json& call = answer.tool_calls[0];
  if (call.is_object() && call.contains("id") && call["id"].is_string())
    *call_id = call["id"].get<std::string>();
  if (!call.is_object() || !call.contains("function") || !call["function"].is_object())
    return "tool_calls[0].function is missing";
  const json& function = call["function"];
  const std::string name = function.value("name", "");
  if (name != expected_tool_name(problem))
    return fmt::format("called '{}', expected '{}'", name, expected_tool_name(problem));
  if (!function.contains("arguments") || !function["arguments"].is_string())
    return "tool_calls[0].function.arguments is not a string";
  const std::string text = function["arguments"].get<std::string>();
  const json arguments = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (arguments.is_discarded()) return fmt::format("arguments are not JSON: {}", text);
  if (arguments != expected_tool_arguments(problem))
    return fmt::format("arguments {}, expected {}", text, expected_tool_arguments(problem).dump());
  if (!final_answer_text(answer.content, markers.think_closes).empty())
    return fmt::format("content '{}' next to the call, expected none",
                       detail::excerpt(answer.content));
  return "";
}

ojson user_turn(const ToolProblem& problem) {
  return {{"role", "user"}, {"content", tool_user_message(problem)}};
}

}  // namespace

GateResult tool_call_gate(const OpenAiClient& server, const GateOptions& options) {
  SplitMix64 rng(options.seed * 0x100 + 4);
  GateResult result{"tool calls", "", "", false, {}};
  const size_t total = options.thresholds.tool_problems;
  size_t calls_right = 0;
  size_t answers_right = 0;
  for (size_t i = 0; i < total; ++i) {
    // Alternate the two tools so both are always covered, whatever the seed draws.
    const ToolProblem problem = make_tool_problem(rng, /*weather=*/i % 2 == 0);
    const std::string label = detail::excerpt(tool_user_message(problem));
    std::string call_id = fmt::format("call_gates_{}", i);
    ojson request = chat_request(tool_user_message(problem), options.thresholds);
    request["tools"] = tool_definitions();
    try {
      const std::string problem_text =
          check_call(read_chat_answer(server.chat(request)), problem, options.markers, &call_id);
      if (problem_text.empty())
        ++calls_right;
      else
        result.details.push_back(fmt::format("call for '{}': {}", label, problem_text));
    } catch (const ConnectionError&) {
      throw;
    } catch (const Error& e) {
      result.details.push_back(fmt::format("call for '{}': {}", label, e.what()));
    }
    // Round 2 always sends the expected call (as vLLM clients do, arguments as a JSON string),
    // so the answer from the tool result is checked even when round 1 went wrong.
    const ojson call = {{"id", call_id},
                        {"type", "function"},
                        {"function",
                         {{"name", expected_tool_name(problem)},
                          {"arguments", expected_tool_arguments(problem).dump()}}}};
    ojson messages = ojson::array();
    messages.push_back(user_turn(problem));
    messages.push_back(
        {{"role", "assistant"}, {"content", ""}, {"tool_calls", ojson::array({call})}});
    messages.push_back(
        {{"role", "tool"}, {"tool_call_id", call_id}, {"content", tool_result(problem)}});
    request["messages"] = messages;
    try {
      const ChatAnswer answer = read_chat_answer(server.chat(request));
      const std::string text = final_answer_text(answer.content, options.markers.think_closes);
      if (text == tool_final_answer(problem))
        ++answers_right;
      else
        result.details.push_back(fmt::format("answer to '{}' with {}: expected '{}', got '{}'",
                                             label, tool_result(problem),
                                             tool_final_answer(problem), detail::excerpt(text)));
    } catch (const ConnectionError&) {
      throw;
    } catch (const Error& e) {
      result.details.push_back(fmt::format("answer to '{}': {}", label, e.what()));
    }
  }
  const double min_fraction = options.thresholds.tool_min_fraction;
  result.measured =
      fmt::format("calls {}/{}, answers {}/{}", calls_right, total, answers_right, total);
  result.threshold = fmt::format("each {}", fraction_threshold_text(min_fraction, total));
  result.passed = meets_fraction(calls_right, total, min_fraction) &&
                  meets_fraction(answers_right, total, min_fraction);
  return result;
}

}  // namespace minimax::gates
