// The serving loop and the OpenAI sinks' common ending (serve/serving_loop.h).
#include "serve/serving_loop.h"

#include <algorithm>

#include "serve/openai_response.h"

namespace minimax {
namespace {

// What the loop returns when the client has left (a streamed write failed, or its ClientAlive
// said so): the requests are cancelled and nothing more is written, not even an error event.
// Status 499, nginx's "client closed request": never a status a server sends on purpose, so it
// cannot be mistaken for an engine or request error.
constexpr int kClientClosedRequest = 499;
constexpr int kClientGone = -2;
// How long next_event waits on one stream before it looks at the client (and the other streams)
// again: a lone stream blocks for a quarter second; several take short turns so none starves.
constexpr auto kLoneStreamWait = std::chrono::milliseconds(250);
constexpr auto kTurnWait = std::chrono::milliseconds(5);

ApiError client_gone() {
  return ApiError{kClientClosedRequest, "client closed the request", "client_closed_request", ""};
}

bool is_client_gone(const ApiError& error) { return error.status == kClientClosedRequest; }

// Waits for the next event of any unfinished stream (finished[i] marks those done); returns its
// index, -1 when all are finished, or kClientGone when `watch` sees the client leave (checked
// between waits of at most 250 ms, so a request still queued notices too).
int next_event(std::vector<std::shared_ptr<RequestStream>>& streams, std::vector<bool>& finished,
               EngineEvent& event, DisconnectWatch& watch) {
  const auto slice = streams.size() == 1 ? kLoneStreamWait : kTurnWait;
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

// The error for an engine finish that is not a normal end ("timeout", "abort", "error"), or
// nullopt for "stop" / "length".
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

// The request log's view of a call (serve/request_log.h): the prompt once (every choice has the
// same), completion tokens summed over the choices and over the requests a sink restarted with,
// the first token's time, and how the choices ended.
class CallTally {
 public:
  CallTally(RequestStats& stats, size_t streams) : stats_(stats) { restart(streams); }

  void event(size_t i, const EngineEvent& e) {
    if (!stats_.first_token && !e.tokens.empty())
      stats_.first_token = std::chrono::steady_clock::now();
    if (!restarted_) stats_.prompt_tokens = std::max(stats_.prompt_tokens, e.prompt_tokens);
    completion_[i] = e.completion_tokens;
    stats_.completion_tokens = carried_;
    for (const int64_t n : completion_) stats_.completion_tokens += n;
    if (e.finished) finish(e.finish_reason);
  }
  // The sink replaced its requests: what the old ones generated stays counted.
  void restart(size_t streams) {
    restarted_ = !completion_.empty();
    for (const int64_t n : completion_) carried_ += n;
    completion_.assign(streams, 0);
  }
  void finish(std::string_view reason) {
    const std::string item(reason);
    std::string& all = stats_.finish_reason;
    if (("," + all + ",").find("," + item + ",") == std::string::npos)
      all += (all.empty() ? "" : ",") + item;
  }

 private:
  RequestStats& stats_;
  std::vector<int64_t> completion_;
  int64_t carried_ = 0;
  bool restarted_ = false;
};

// Runs every stream to its end. Returns the error that ended the call early, if any.
std::optional<ApiError> run_streams(ServingSink& sink, SinkWriter& out, RequestStats& stats) {
  std::vector<bool> finished(sink.streams.size(), false);
  CallTally tally(stats, sink.streams.size());
  EngineEvent event;
  try {
    for (;;) {
      const int i = next_event(sink.streams, finished, event, sink.watch);
      if (i == kClientGone) return client_gone();
      if (i < 0) return std::nullopt;
      tally.event(static_cast<size_t>(i), event);
      const EventStep step = sink.on_event(i, event, out);
      if (out.client_gone()) return client_gone();
      if (step == EventStep::kRestarted) {  // the old request's later events are dropped
        finished.assign(sink.streams.size(), false);
        tally.restart(sink.streams.size());
        continue;
      }
      if (!event.finished) continue;
      if (std::optional<ApiError> error = finish_error(event, sink.timeout_seconds)) return error;
      sink.on_finish(i, event, out);
      if (out.client_gone()) return client_gone();
    }
  } catch (const ApiException& e) {  // a sink's continuation could not be submitted (queue full)
    return e.error();
  }
}

}  // namespace

bool DisconnectWatch::gone() {
  if (gone_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return false;
  next_check_ = now + kInterval;
  gone_ = client_alive_ && !client_alive_();
  return gone_;
}

bool SinkWriter::write(std::string_view bytes) {
  if (write_ != nullptr && !gone_) gone_ = !(*write_)(bytes);
  return !gone_;
}

HttpReply serve_call(std::shared_ptr<ServingSink> sink, bool stream) {
  auto stats = std::make_shared<RequestStats>();
  stats->stream = stream;
  // An early end names itself in the log when no choice finished first: a client that left, or
  // the engine's reason (the error's status is in the line already).
  const auto note_error = [](RequestStats& s, const ApiError& error) {
    if (s.finish_reason.empty())
      s.finish_reason = is_client_gone(error) ? "client_closed" : "error";
  };
  if (!stream) {
    SinkWriter nowhere;
    HttpReply reply;
    if (std::optional<ApiError> error = run_streams(*sink, nowhere, *stats)) {
      cancel_all(sink->streams);
      note_error(*stats, *error);
      reply = sink->reply_error(*error);
    } else {
      reply = sink->reply();
    }
    reply.stats = std::move(stats);
    return reply;
  }
  HttpReply reply;
  reply.content_type = "text/event-stream";
  reply.stats = stats;
  reply.stream = [sink, stats, note_error](const ChunkWrite& write) {
    SinkWriter out(&write);
    sink->open(out);
    const std::optional<ApiError> error =
        out.client_gone() ? client_gone() : run_streams(*sink, out, *stats);
    if (!error) return sink->close(out);
    cancel_all(sink->streams);
    note_error(*stats, *error);
    if (!is_client_gone(*error)) sink->stream_error(*error, out);
  };
  return reply;
}

void OpenAiSink::close(SinkWriter& out) {
  if (fields.include_usage) out.write(sse_event(usage_chunk()));
  out.write(sse_done());
}

void OpenAiSink::stream_error(const ApiError& error, SinkWriter& out) {
  out.write(sse_error(error));
  out.write(sse_done());
}

}  // namespace minimax
