// The request line and the throughput line: every field in both formats, "-" for what a request
// that generated nothing does not have, a monitor's route at debug level, and a throughput line
// only while something ran.
#include "serve/request_log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "serve/throughput_log.h"

namespace minimax {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

TEST(RequestLog, GeneratingRequestHasEveryField) {
  RequestStats stats;
  stats.model = "tiny";
  stats.prompt_tokens = 12;
  stats.completion_tokens = 8;
  stats.finish_reason = "length";
  stats.stream = true;
  const Steady::time_point start{};
  stats.first_token = start + milliseconds(35);
  const RequestRecord record{"127.0.0.1:51234",
                             "POST",
                             "/v1/chat/completions",
                             200,
                             start,
                             start + milliseconds(210),
                             &stats,
                             false};
  EXPECT_EQ(request_log_line(LogFormat::kText, LogTime{}, record),
            "1970-01-01T00:00:00.000Z info    request client=127.0.0.1:51234 method=POST "
            "path=/v1/chat/completions status=200 model=tiny prompt_tokens=12 "
            "completion_tokens=8 ttft_ms=35.0 duration_ms=210.0 finish_reason=length stream=true");
  const auto json = nlohmann::json::parse(request_log_line(LogFormat::kJson, LogTime{}, record));
  EXPECT_EQ(json["ts"], "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(json["level"], "info");
  EXPECT_EQ(json["msg"], "request");
  EXPECT_EQ(json["client"], "127.0.0.1:51234");
  EXPECT_EQ(json["method"], "POST");
  EXPECT_EQ(json["path"], "/v1/chat/completions");
  EXPECT_EQ(json["status"], 200);
  EXPECT_EQ(json["model"], "tiny");
  EXPECT_EQ(json["prompt_tokens"], 12);
  EXPECT_EQ(json["completion_tokens"], 8);
  EXPECT_DOUBLE_EQ(json["ttft_ms"].get<double>(), 35.0);
  EXPECT_DOUBLE_EQ(json["duration_ms"].get<double>(), 210.0);
  EXPECT_EQ(json["finish_reason"], "length");
  EXPECT_EQ(json["stream"], true);
}

TEST(RequestLog, RefusalHasDashesForWhatItDoesNotHave) {
  const Steady::time_point start{};
  const RequestRecord record{"[::1]:4000", "GET", "/v1/models", 401, start, start + milliseconds(1),
                             nullptr,      false};
  EXPECT_EQ(request_log_line(LogFormat::kText, LogTime{}, record),
            "1970-01-01T00:00:00.000Z info    request client=[::1]:4000 method=GET "
            "path=/v1/models status=401 model=- prompt_tokens=- completion_tokens=- ttft_ms=- "
            "duration_ms=1.0 finish_reason=- stream=false");
  // A head too malformed to have a method or path still makes a line that parses.
  const RequestRecord garbage{"10.0.0.1:1", "", "", 400, start, start, nullptr, false};
  const auto json = nlohmann::json::parse(request_log_line(LogFormat::kJson, LogTime{}, garbage));
  EXPECT_EQ(json["method"], "-");
  EXPECT_EQ(json["status"], 400);
  EXPECT_EQ(json["prompt_tokens"], "-");
}

TEST(RequestLog, PathWithOddBytesStaysOneLineOfJson) {
  const Steady::time_point start{};
  const RequestRecord record{"1.2.3.4:5", "GET", "/a b\"\n\xff", 404, start, start, nullptr, false};
  const std::string text = request_log_line(LogFormat::kText, LogTime{}, record);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_NE(text.find(R"(path="/a b\"\n\u00ff")"), std::string::npos) << text;
  const std::string line = request_log_line(LogFormat::kJson, LogTime{}, record);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(line)["path"], "/a b\"\n\xc3\xbf");
}

TEST(RequestLog, MonitorRoutesLogAtDebug) {
  const RequestRecord health{"1.2.3.4:5", "GET", "/health", 200, {}, {}, nullptr, true};
  EXPECT_EQ(nlohmann::json::parse(request_log_line(LogFormat::kJson, LogTime{}, health))["level"],
            "debug");
}

TEST(ThroughputLog, QuietWhenIdleOtherwiseRatesAndKvUse) {
  ServeMetrics::Snapshot before, now;
  now.kv_blocks_total = 1000;
  EXPECT_EQ(throughput_log_line(LogFormat::kText, LogTime{}, before, now, 10), std::nullopt);
  now.running = 2;
  now.waiting = 1;
  now.kv_blocks_used = 125;
  before.generation_tokens = 100;
  now.generation_tokens = 452;
  now.prompt_tokens = 1000;
  EXPECT_EQ(throughput_log_line(LogFormat::kText, LogTime{}, before, now, 10),
            "1970-01-01T00:00:00.000Z info    throughput running=2 waiting=1 "
            "generation_tok_s=35.2 prompt_tok_s=100.0 kv_blocks_used=125 kv_blocks_total=1000 "
            "kv_use_pct=12.5");
  // The interval in which the last request finished is still reported.
  ServeMetrics::Snapshot done = now;
  done.running = done.waiting = 0;
  done.generation_tokens += 5;
  const auto last = throughput_log_line(LogFormat::kJson, LogTime{}, now, done, 10);
  ASSERT_TRUE(last);
  const auto json = nlohmann::json::parse(*last);
  EXPECT_EQ(json["msg"], "throughput");
  EXPECT_EQ(json["running"], 0);
  EXPECT_DOUBLE_EQ(json["generation_tok_s"].get<double>(), 0.5);
  // And then it is quiet.
  EXPECT_EQ(throughput_log_line(LogFormat::kText, LogTime{}, done, done, 10), std::nullopt);
}

}  // namespace
}  // namespace minimax
