// Submitting choices and mapping engine results for the OpenAI handlers (serve/service_requests.h).
#include "serve/service_requests.h"

#include <algorithm>
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

bool DisconnectWatch::gone() {
  if (gone_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return false;
  next_check_ = now + kInterval;
  gone_ = client_alive_ && !client_alive_();
  return gone_;
}

int next_event(std::vector<std::shared_ptr<RequestStream>>& streams, std::vector<bool>& finished,
               EngineEvent& event, DisconnectWatch& watch) {
  // One stream: block on it. Several: take turns with short waits so none starves.
  const auto slice = std::chrono::milliseconds(streams.size() == 1 ? 250 : 5);
  for (;;) {
    if (watch.gone()) return kClientGone;
    bool any_open = false;
    for (size_t i = 0; i < streams.size(); ++i) {
      if (finished[i]) continue;
      any_open = true;
      if (streams[i]->wait(event, slice)) {
        if (event.finished) finished[i] = true;
        return static_cast<int>(i);
      }
    }
    if (!any_open) return -1;
  }
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

std::optional<ApiError> finish_error(const EngineEvent& event, double timeout_seconds) {
  if (event.finish_reason == "timeout")
    return ApiError{408, fmt::format("request timed out after {} s", timeout_seconds),
                    api_error_type(408), ""};
  if (event.finish_reason == "abort")
    return service_unavailable("the request was aborted (server shutting down)");
  if (event.finish_reason == "error")
    return event.request_error ? bad_request(event.error) : internal_error(event.error);
  return std::nullopt;
}

ApiError client_gone() {
  return ApiError{kClientClosedRequest, "client closed the request", "client_closed_request", ""};
}

bool is_client_gone(const ApiError& error) { return error.status == kClientClosedRequest; }

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
