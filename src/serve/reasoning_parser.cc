// The reasoning/content state machine and its start state (serve/reasoning_parser.h).
#include "serve/reasoning_parser.h"

#include <optional>

#include "serve/marked_text.h"
#include "text/detokenizer.h"

namespace minimax {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

ReasoningState state_for_mode(ThinkingMode mode) {
  return mode == ThinkingMode::kEnabled ? ReasoningState::kReasoning : ReasoningState::kContent;
}

// True when `text` (after optional whitespace) starts with `suffix`.
bool starts_after_space(std::string_view text, std::string_view suffix) {
  size_t i = 0;
  while (i < text.size() && is_space(text[i])) ++i;
  return text.substr(i).starts_with(suffix);
}

}  // namespace

ReasoningState state_after_prefix(std::string_view marked, ParserFormat format, ThinkingMode mode) {
  const ParserFormatSpec& spec = parser_format_spec(format);
  std::optional<ReasoningState> decided;
  for (size_t i = 0; i < marked.size(); ++i) {
    const int k = marker_number(marked[i]);
    if (k < 0) continue;
    if (k == spec.think_open) {
      decided = ReasoningState::kReasoning;
    } else if (k == spec.think_close) {
      decided = ReasoningState::kContent;
    } else if (k == spec.tool_marker &&
               starts_after_space(marked.substr(i + 1), spec.tool_start_suffix)) {
      decided = ReasoningState::kContent;  // a prefilled tool call: reasoning is over
    }
  }
  return decided ? *decided : state_for_mode(mode);
}

ReasoningState initial_reasoning_state(std::string_view prompt, ParserFormat format,
                                       ThinkingMode mode) {
  const ParserFormatSpec& spec = parser_format_spec(format);
  const std::string header = spec.role_start + spec.assistant_role;
  const size_t at = prompt.rfind(header);
  if (at == std::string_view::npos) return state_for_mode(mode);
  const std::string_view tail = prompt.substr(at + header.size());
  if (tail.find(spec.end_of_message) != std::string_view::npos) return state_for_mode(mode);
  MarkerLexer lexer(spec.markers);
  std::string marked = lexer.push_text(tail);
  marked += lexer.finish();
  return state_after_prefix(marked, format, mode);
}

ReasoningState initial_reasoning_state(std::span<const int32_t> ids, const BpeTokenizer& tokenizer,
                                       ParserFormat format, ThinkingMode mode) {
  const ParserFormatSpec& spec = parser_format_spec(format);
  const std::optional<int32_t> role_id = tokenizer.token_id(spec.role_start);
  if (!role_id) {  // the header is not a token here: only the text can be searched
    return initial_reasoning_state(tokenizer.decode(ids), format, mode);
  }
  const std::optional<int32_t> end_id = tokenizer.token_id(spec.end_of_message);
  for (size_t i = ids.size(); i-- > 0;) {
    if (ids[i] != *role_id) continue;
    // The role name follows as ordinary tokens; "ai\n" may share a token with what comes next.
    std::string role_text;
    size_t next = i + 1;
    while (role_text.size() < spec.assistant_role.size() && next < ids.size())
      role_text += tokenizer.decode(ids.subspan(next++, 1));
    if (!role_text.starts_with(spec.assistant_role)) continue;
    MarkerLexer lexer = MarkerLexer::for_tokens(spec.markers, tokenizer);
    std::string marked =
        lexer.push_text(std::string_view(role_text).substr(spec.assistant_role.size()));
    IncrementalDetokenizer detokenizer(tokenizer);
    for (size_t j = next; j < ids.size(); ++j) {
      if (end_id && ids[j] == *end_id) return state_for_mode(mode);
      marked += lexer.push_token(ids[j], detokenizer.push(ids[j]));
    }
    marked += lexer.push_text(detokenizer.flush());
    return state_after_prefix(marked, format, mode);
  }
  return state_for_mode(mode);
}

ReasoningParser::ReasoningParser(const ParserFormatSpec& spec, ReasoningState start)
    : spec_(&spec), state_(start) {}

void ReasoningParser::emit(std::string_view marked, Output& out) const {
  if (state_ == ReasoningState::kReasoning)
    append_rendered(out.reasoning, marked, spec_->markers);
  else
    out.content.append(marked);
}

bool ReasoningParser::step_leading(char c, Output& out) {
  if (is_space(c)) {
    held_ += c;
    return true;
  }
  leading_ = false;
  const int k = marker_number(c);
  if (k == spec_->think_open) {  // M2.5+ write <think> themselves; M3 adaptive opens here
    held_.clear();
    state_ = ReasoningState::kReasoning;
    return true;
  }
  if (k == spec_->think_close) {
    if (state_ == ReasoningState::kReasoning) {
      emit(held_, out);
      state_ = ReasoningState::kContent;
    }  // else a stray leading end marker (M3 history style): dropped
    held_.clear();
    return true;
  }
  emit(held_, out);
  held_.clear();
  return false;
}

bool ReasoningParser::step_tool_hold(char c, Output& out) {
  const std::string& suffix = spec_->tool_start_suffix;
  if (tool_matched_ == 0 && is_space(c)) {
    held_ += c;
    return true;
  }
  if (c == suffix[tool_matched_]) {
    held_ += c;
    if (++tool_matched_ == suffix.size()) {  // a tool call ends reasoning implicitly
      state_ = ReasoningState::kContent;
      out.content += held_;
      held_.clear();
      tool_hold_ = false;
    }
    return true;
  }
  append_rendered(out.reasoning, held_, spec_->markers);  // not a tool call after all
  held_.clear();
  tool_hold_ = false;
  return false;
}

void ReasoningParser::push(std::string_view in, Output& out) {
  size_t i = 0;
  while (i < in.size()) {
    if (tool_hold_) {
      if (step_tool_hold(in[i], out)) ++i;
      continue;
    }
    if (leading_) {
      if (step_leading(in[i], out)) ++i;
      continue;
    }
    size_t j = i;
    while (j < in.size() && !is_marker_byte(in[j])) ++j;
    emit(in.substr(i, j - i), out);
    if (j == in.size()) break;
    const char c = in[j];
    i = j + 1;
    const int k = marker_number(c);
    if (state_ == ReasoningState::kReasoning) {
      if (k == spec_->think_close) {
        state_ = ReasoningState::kContent;
      } else if (k == spec_->tool_marker) {
        if (spec_->tool_start_suffix.empty()) {
          state_ = ReasoningState::kContent;
          out.content += c;
        } else {
          tool_hold_ = true;
          tool_matched_ = 0;
          held_.assign(1, c);
        }
      } else {
        append_rendered(out.reasoning, std::string_view(&c, 1), spec_->markers);
      }
    } else if (!(k == spec_->think_close && spec_->drop_close_in_content)) {
      out.content += c;
    }
  }
}

void ReasoningParser::finish(Output& out) {
  if (tool_hold_)
    append_rendered(out.reasoning, held_, spec_->markers);
  else
    emit(held_, out);
  held_.clear();
  tool_hold_ = false;
  leading_ = false;
}

}  // namespace minimax
