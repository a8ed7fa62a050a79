// Submitting choices and mapping engine results for the OpenAI handlers (serve/service_requests.h).
#include "serve/service_requests.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "base/error.h"

namespace minimax {
namespace {

// The request field an engine or runtime validation message is about: messages start with the
// parameter name ("top_p: …", "max_tokens: …", "prompt: …").
std::string param_of(std::string_view message, std::string_view prompt_field) {
  for (std::string_view name :
       {"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
        "frequency_penalty", "max_tokens", "stop", "seed", "top_logprobs"})
    if (message.substr(0, name.size()) == name) return std::string(name);
  if (message.substr(0, 6) == "prompt") return std::string(prompt_field);
  return {};
}

uint64_t fresh_seed() {
  static std::mutex mutex;
  static std::mt19937_64 generator{std::random_device{}()};
  std::lock_guard lock(mutex);
  return generator();
}

}  // namespace

std::vector<std::shared_ptr<RequestStream>> submit_choices(Engine& engine, const TextModel& model,
                                                           const GenerationFields& fields,
                                                           const ChoiceSpec& spec) {
  EngineRequest base;
  base.prompt = spec.prompt;
  base.sampling = apply_overrides(model.text().sampling, fields.sampling);
  base.sampling.top_logprobs = fields.top_logprobs;
  base.logprobs = fields.logprobs;
  base.prompt_logprobs = spec.prompt_logprobs;
  base.timeout_seconds = spec.timeout_seconds;
  base.constraint = spec.constraint;
  base.stop.max_tokens = fields.max_tokens.value_or(spec.default_max_tokens);
  if (!fields.ignore_eos) base.stop.stop_token_ids = model.text().eos_token_ids;
  for (int32_t id : fields.stop_token_ids) base.stop.stop_token_ids.push_back(id);
  base.stop.stop_strings = fields.stop;
  const std::string& prompt_field = spec.prompt_field;
  if (!fields.max_tokens && base.stop.max_tokens <= 0)
    throw ApiException(bad_request(
        fmt::format("the prompt ({} tokens) leaves no room to generate within max_model_len {}",
                    spec.prompt.size(), engine.options().max_model_len),
        prompt_field));

  std::vector<std::shared_ptr<RequestStream>> streams;
  try {
    for (int i = 0; i < fields.n; ++i) {
      EngineRequest request = base;
      request.sampling.seed =
          fields.sampling.seed ? *fields.sampling.seed + static_cast<uint64_t>(i) : fresh_seed();
      streams.push_back(engine.submit(std::move(request)));
    }
  } catch (const EngineBusy& e) {
    cancel_all(streams);
    throw ApiException(too_many_requests(e.what()));
  } catch (const ApiException&) {
    cancel_all(streams);
    throw;
  } catch (const Error& e) {
    cancel_all(streams);
    throw ApiException(bad_request(e.what(), param_of(e.what(), prompt_field)));
  }
  return streams;
}

void cancel_all(std::vector<std::shared_ptr<RequestStream>>& streams) {
  for (auto& stream : streams) stream->cancel();
}

std::string_view VisibleText::operator()(const TokenOutput& token) const {
  if (!skip_special_ || tokenizer_ == nullptr || !tokenizer_->is_special(token.token))
    return token.text;
  if (std::find(kept_.begin(), kept_.end(), token.token) != kept_.end()) return token.text;
  return {};
}

TokenLogprobs token_logprobs(const BpeTokenizer& tokenizer, const TokenOutput& token) {
  TokenLogprobs out;
  out.token = std::string(tokenizer.token_bytes(token.logprobs.chosen.token));
  out.logprob = token.logprobs.chosen.logprob;
  for (const TokenLogprob& alt : token.logprobs.top)
    out.top.push_back({std::string(tokenizer.token_bytes(alt.token)), alt.logprob});
  return out;
}

std::vector<std::optional<PromptTokenLogprobs>> prompt_logprob_entries(
    const BpeTokenizer& tokenizer, const std::vector<std::optional<PromptLogprob>>& positions) {
  std::vector<std::optional<PromptTokenLogprobs>> out;
  for (const auto& position : positions) {
    if (!position) {
      out.emplace_back(std::nullopt);
      continue;
    }
    PromptTokenLogprobs entry;
    entry.actual = {position->token, std::string(tokenizer.token_bytes(position->token)),
                    position->logprob, position->rank};
    int rank = 1;
    for (const TokenLogprob& alt : position->top)
      entry.top.push_back(
          {alt.token, std::string(tokenizer.token_bytes(alt.token)), alt.logprob, rank++});
    out.emplace_back(std::move(entry));
  }
  return out;
}

HttpReply json_reply(int status, const nlohmann::ordered_json& body) {
  HttpReply reply;
  reply.status = status;
  reply.body = json_text(body);
  return reply;
}

HttpReply error_reply(const ApiError& error) {
  HttpReply reply;
  reply.status = error.status;
  reply.body = error_body(error);
  return reply;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace minimax
