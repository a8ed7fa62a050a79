// Log lines: the timestamp (ISO-8601, UTC, milliseconds), the level names, the text format's
// key=value fields and quoting, the JSON format's escaping (a line always parses), and the level
// and format names the flags take.
#include "base/log.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>

namespace minimax {
namespace {

// 2024-02-29T23:59:58.007Z
LogTime a_time() {
  using namespace std::chrono;
  return LogTime{} + sys_days{year{2024} / February / 29}.time_since_epoch() + hours(23) +
         minutes(59) + seconds(58) + milliseconds(7);
}

TEST(Log, TimestampIsIso8601UtcWithMilliseconds) {
  EXPECT_EQ(log_timestamp(a_time()), "2024-02-29T23:59:58.007Z");
  EXPECT_EQ(log_timestamp(LogTime{}), "1970-01-01T00:00:00.000Z");
  const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  EXPECT_TRUE(std::regex_match(log_timestamp(std::chrono::system_clock::now()), iso));
}

TEST(Log, TextLineHasTimeLevelMessageAndFields) {
  EXPECT_EQ(log_line(LogFormat::kText, a_time(), LogLevel::kInfo, "serve: ready"),
            "2024-02-29T23:59:58.007Z info    serve: ready");
  EXPECT_EQ(log_line(LogFormat::kText, a_time(), LogLevel::kWarn, "request",
                     {log_field("path", "/v1/models"), log_field("status", int64_t{404}),
                      log_field("model", "my model"), log_field("empty", ""),
                      log_field("q", "a\"b=c"), log_bool_field("stream", true),
                      log_field_ms("ttft_ms", 12.345), log_field_ms("none_ms", -1)}),
            "2024-02-29T23:59:58.007Z warning request path=/v1/models status=404 "
            "model=\"my model\" empty=\"\" q=\"a\\\"b=c\" stream=true ttft_ms=12.3 none_ms=-");
}

TEST(Log, JsonLineHasTsLevelMsgAndFieldsAsKeys) {
  EXPECT_EQ(log_line(LogFormat::kJson, a_time(), LogLevel::kError, "boom",
                     {log_field("path", "/x"), log_field("status", int64_t{500}),
                      log_bool_field("stream", false), log_field_ms("ttft_ms", -1)}),
            R"({"ts":"2024-02-29T23:59:58.007Z","level":"error","msg":"boom","path":"/x",)"
            R"("status":500,"stream":false,"ttft_ms":"-"})");
}

TEST(Log, JsonEscapingKeepsEveryLineParseable) {
  EXPECT_EQ(json_escape("plain"), "plain");
  EXPECT_EQ(json_escape("a\"b\\c"), "a\\\"b\\\\c");
  EXPECT_EQ(json_escape("line\nnext\r\ttab"), "line\\nnext\\r\\ttab");
  EXPECT_EQ(json_escape(std::string("\x01\x1f\x7f", 3)), "\\u0001\\u001f\\u007f");
  EXPECT_EQ(json_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // valid UTF-8 stays as is
  // Bytes that are not UTF-8 (a lone continuation, a truncated sequence, an overlong form, a
  // surrogate) become \u00XX of the byte, so the line is still valid JSON.
  EXPECT_EQ(json_escape("\x80"), "\\u0080");
  EXPECT_EQ(json_escape("a\xc3"), "a\\u00c3");
  EXPECT_EQ(json_escape("\xc0\xaf"), "\\u00c0\\u00af");
  EXPECT_EQ(json_escape("\xed\xa0\x80"), "\\u00ed\\u00a0\\u0080");
  EXPECT_EQ(json_escape(std::string("nul\0end", 7)), "nul\\u0000end");
}

TEST(Log, LevelAndFormatNames) {
  EXPECT_EQ(parse_log_level("debug"), LogLevel::kDebug);
  EXPECT_EQ(parse_log_level("info"), LogLevel::kInfo);
  EXPECT_EQ(parse_log_level("warning"), LogLevel::kWarn);
  EXPECT_EQ(parse_log_level("warn"), LogLevel::kWarn);  // MINIMAX_LOG's old spelling
  EXPECT_EQ(parse_log_level("error"), LogLevel::kError);
  EXPECT_EQ(parse_log_level("INFO"), std::nullopt);
  EXPECT_EQ(parse_log_level("verbose"), std::nullopt);
  EXPECT_EQ(log_level_name(LogLevel::kWarn), "warning");
  EXPECT_EQ(parse_log_format("text"), LogFormat::kText);
  EXPECT_EQ(parse_log_format("json"), LogFormat::kJson);
  EXPECT_EQ(parse_log_format("yaml"), std::nullopt);
}

}  // namespace
}  // namespace minimax
