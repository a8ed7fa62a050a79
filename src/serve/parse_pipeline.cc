// The combined streaming parser (serve/parse_pipeline.h).
#include "serve/parse_pipeline.h"

#include <fmt/format.h>

#include "text/detokenizer.h"

namespace minimax {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string arguments_text(const nlohmann::ordered_json& arguments) {
  return arguments.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void DeltaAccumulator::add(const ParseDelta& delta) {
  reasoning_ += delta.reasoning;
  content_ += delta.content;
  for (const ToolCallDelta& call : delta.tool_calls) {
    if (call.index < 0) continue;
    if (static_cast<size_t>(call.index) >= calls_.size()) calls_.resize(call.index + 1);
    ToolCall& target = calls_[call.index];
    if (!call.id.empty()) target.id = call.id;
    if (!call.name.empty()) target.name = call.name;
    target.arguments += call.arguments;
  }
}

ParseResult DeltaAccumulator::result() const {
  ParseResult result;
  if (!reasoning_.empty()) result.reasoning = reasoning_;
  if (!content_.empty()) result.content = content_;
  result.tool_calls = calls_;
  return result;
}

ParsePipeline::ParsePipeline(ParserOptions options)
    : options_(std::move(options)),
      spec_(&parser_format_spec(options_.format)),
      lexer_(spec_->markers) {
  schemas_ = std::make_unique<ToolSchemas>(options_.tools);
  if (options_.parse_reasoning)
    reasoning_ = std::make_unique<ReasoningParser>(*spec_, options_.initial);
  if (options_.parse_tool_calls) tools_ = make_tool_call_parser(options_.format, *schemas_);
  if (!options_.id_seed) random_ids_.seed(std::random_device{}());
}

ParsePipeline::ParsePipeline(ParserOptions options, const BpeTokenizer& tokenizer)
    : ParsePipeline(std::move(options)) {
  lexer_ = MarkerLexer::for_tokens(spec_->markers, tokenizer);
}

ParsePipeline::~ParsePipeline() = default;
ParsePipeline::ParsePipeline(ParsePipeline&&) noexcept = default;

ParseDelta ParsePipeline::push_text(std::string_view text) {
  return run(lexer_.push_text(text), false);
}

ParseDelta ParsePipeline::push_token(int32_t id, std::string_view text) {
  return run(lexer_.push_token(id, text), false);
}

ParseDelta ParsePipeline::finish() { return run(lexer_.finish(), true); }

bool ParsePipeline::in_reasoning() const { return reasoning_ && reasoning_->in_reasoning(); }

std::string ParsePipeline::next_call_id() {
  uint64_t high, low;
  if (options_.id_seed) {
    uint64_t state = *options_.id_seed + 2 * static_cast<uint64_t>(calls_);
    high = splitmix64(state);
    low = splitmix64(state);
  } else {
    high = random_ids_();
    low = random_ids_();
  }
  return fmt::format("call_{:016x}{:08x}", high, low & 0xffffffffULL);
}

ParseDelta ParsePipeline::run(std::string marked, bool final) {
  ParseDelta delta;
  std::string content;
  if (reasoning_) {
    ReasoningParser::Output split;
    reasoning_->push(marked, split);
    if (final) reasoning_->finish(split);
    delta.reasoning = std::move(split.reasoning);
    content = std::move(split.content);
  } else {
    content = std::move(marked);
  }
  if (tools_) {
    ToolParseOutput parsed;
    tools_->push(content, parsed);
    if (final) tools_->finish(parsed);
    delta.content = std::move(parsed.content);
    for (ParsedToolCall& call : parsed.calls) {
      ToolCallDelta out;
      out.id = next_call_id();
      out.index = calls_++;
      out.name = std::move(call.name);
      out.arguments = arguments_text(call.arguments);
      delta.tool_calls.push_back(std::move(out));
    }
  } else {
    delta.content = render_marked(content, spec_->markers);
  }
  if (options_.append_think && !options_.parse_reasoning && !think_appended_) {
    delta.content.insert(0, spec_->markers.at(spec_->think_open));
    think_appended_ = true;
  }
  accumulated_.add(delta);
  return delta;
}

ParseResult parse_output(std::string_view output, const ParserOptions& options) {
  ParsePipeline pipeline(options);
  pipeline.push_text(output);
  pipeline.finish();
  return pipeline.result();
}

ParseResult parse_output_tokens(std::span<const int32_t> ids, const BpeTokenizer& tokenizer,
                                const ParserOptions& options) {
  ParsePipeline pipeline(options, tokenizer);
  IncrementalDetokenizer detokenizer(tokenizer);
  for (int32_t id : ids) pipeline.push_token(id, detokenizer.push(id));
  pipeline.push_text(detokenizer.flush());
  pipeline.finish();
  return pipeline.result();
}

}  // namespace minimax
