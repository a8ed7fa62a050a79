// The one loop that runs a generating request (internal to src/serve). It waits on the call's
// engine requests, notices a client that left, turns an abnormal finish (timeout, abort, error)
// into an error, cancels every engine request when the call ends early, and assembles the reply:
// streamed as server-sent events, or whole. What each API makes of an event (OpenAI chat chunks,
// completion chunks, Anthropic content blocks) is its sink's business: ChatSink in
// chat_handler.cc, CompletionSink in completion_handler.cc, MessageSink in messages_handler.cc.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/request_stream.h"
#include "serve/api_error.h"
#include "serve/http_server.h"
#include "serve/service_requests.h"

namespace minimax {

// Polls a request's ClientAlive at most every kInterval, so the loop can ask it at every event.
class DisconnectWatch {
 public:
  static constexpr std::chrono::milliseconds kInterval{100};
  explicit DisconnectWatch(ClientAlive client_alive = {})
      : client_alive_(std::move(client_alive)) {}
  // True once the client has gone (and from then on).
  bool gone();

 private:
  ClientAlive client_alive_;
  std::chrono::steady_clock::time_point next_check_{};
  bool gone_ = false;
};

// Where a sink writes its stream: the client when streamed, nowhere when the reply is whole.
class SinkWriter {
 public:
  explicit SinkWriter(const ChunkWrite* write = nullptr) : write_(write) {}
  bool streaming() const { return write_ != nullptr; }
  // Writes `bytes` when streaming. False once a write failed (the client is gone); nothing is
  // written after that.
  bool write(std::string_view bytes);
  bool client_gone() const { return gone_; }

 private:
  const ChunkWrite* write_;
  bool gone_ = false;
};

// What the loop does after a sink took an event.
enum class EventStep {
  kContinue,
  // The sink replaced `streams` (Anthropic's thinking budget closed the reasoning and continues
  // in a new engine request, or in none when max_tokens is used up): the loop starts over on them.
  kRestarted,
};

// One API's view of a call. The loop calls on_event for every engine event of stream i (in the
// order they come), then on_finish when that event ended its stream normally ("stop", "length").
class ServingSink {
 public:
  virtual ~ServingSink() = default;

  // The call's engine requests (one per choice), the watch on its client, and the timeout that
  // an engine "timeout" finish reports.
  std::vector<std::shared_ptr<RequestStream>> streams;
  DisconnectWatch watch;
  double timeout_seconds = 0;

  // Streamed only: what the stream starts with, before any event.
  virtual void open(SinkWriter& /*out*/) {}
  virtual EventStep on_event(int index, const EngineEvent& event, SinkWriter& out) = 0;
  virtual void on_finish(int index, const EngineEvent& event, SinkWriter& out) = 0;
  // Streamed only: what ends a stream whose requests all finished.
  virtual void close(SinkWriter& out) = 0;
  // Streamed only: an error after the stream started, in the API's event shape.
  virtual void stream_error(const ApiError& error, SinkWriter& out) = 0;
  // Whole: the reply once every request finished, or the error that ended the call early.
  virtual HttpReply reply() = 0;
  virtual HttpReply reply_error(const ApiError& error) = 0;
};

// Runs `sink`'s call: now, returning the whole reply, or, when `stream`, in the returned reply's
// stream callback on the transport's worker. A client that left gets nothing more, not even an
// error event; its engine requests are cancelled.
HttpReply serve_call(std::shared_ptr<ServingSink> sink, bool stream);

// What the OpenAI sinks share: a stream ends with the usage chunk (stream_options.include_usage)
// and "data: [DONE]", also after an error event; errors are OpenAI's shape.
class OpenAiSink : public ServingSink {
 public:
  // `visible` decides what text each token adds (serve/service_requests.h).
  OpenAiSink(ResponseMeta meta, GenerationFields fields, const BpeTokenizer& tokenizer,
             VisibleText visible)
      : meta(std::move(meta)),
        fields(std::move(fields)),
        tokenizer(&tokenizer),
        visible(std::move(visible)) {}

  const ResponseMeta meta;
  const GenerationFields fields;
  const BpeTokenizer* const tokenizer;
  const VisibleText visible;

  void close(SinkWriter& out) override;
  void stream_error(const ApiError& error, SinkWriter& out) override;
  HttpReply reply_error(const ApiError& error) override { return error_reply(error); }

 protected:
  // The usage chunk of this API's stream ("chat.completion.chunk" or "text_completion").
  virtual nlohmann::ordered_json usage_chunk() const = 0;
};

}  // namespace minimax
