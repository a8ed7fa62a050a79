// The throughput sweep: the window and TTFT arithmetic on hand-made token times, the output
// length that keeps every stream decoding together, the CSV read back, the chart's series, and a
// real sweep through the Engine on the tiny M2 checkpoint (every cell measured, the progress
// total exact, bad grids refused naming the flag).
#include "runtime/throughput_sweep.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "base/error.h"
#include "runtime/sweep_report.h"
#include "runtime_fixture.h"

namespace minimax {
namespace {

// Stream s gets tokens at steps first[s] .. first[s] + count - 1, steps 0.1 s apart, sampled
// `jitter` × s after the step's first sequence.
StreamTokenTimes steps(const std::vector<int>& first, int count, double jitter) {
  StreamTokenTimes times(first.size());
  for (size_t s = 0; s < first.size(); ++s)
    for (int k = first[s]; k < first[s] + count; ++k)
      times[s].push_back({k, 0.1 * k + jitter * static_cast<double>(s)});
  return times;
}

TEST(ThroughputSweep, WindowCountsTheStepsWhereEveryStreamDecodes) {
  // Stream 0 at steps 1..10, stream 1 at steps 3..12 (sampled 2 ms after stream 0). Every stream
  // decodes in steps 4..10: 7 steps × 2 streams in the 0.7 s from step 3 to step 10.
  const SweepCell c = summarize_sweep_cell(512, steps({1, 3}, 10, 0.002));
  EXPECT_EQ(c.context, 512);
  EXPECT_EQ(c.streams, 2);
  EXPECT_EQ(c.tokens_per_stream, 10);
  EXPECT_EQ(c.window_tokens, 14);
  EXPECT_NEAR(c.aggregate_tok_s, 14 / 0.7, 1e-9);
  EXPECT_NEAR(c.decode_tok_s_per_stream, c.aggregate_tok_s / 2, 1e-9);
  EXPECT_NEAR(c.ttft_mean_seconds, (0.1 + 0.302) / 2, 1e-12);
  EXPECT_NEAR(c.ttft_max_seconds, 0.302, 1e-12);
}

TEST(ThroughputSweep, OneStreamIsItsOwnDecodeRate) {
  const SweepCell c = summarize_sweep_cell(64, steps({2}, 5, 0));  // tokens at 0.2 .. 0.6 s
  EXPECT_EQ(c.window_tokens, 4);
  EXPECT_NEAR(c.aggregate_tok_s, 10, 1e-9);
  EXPECT_NEAR(c.ttft_mean_seconds, 0.2, 1e-12);
}

TEST(ThroughputSweep, StreamsThatNeverOverlapAreAnError) {
  EXPECT_THROW(summarize_sweep_cell(64, steps({1, 5}, 3, 0)), Error);
  EXPECT_THROW(summarize_sweep_cell(64, steps({1}, 1, 0)), Error);
  // Both streams finish in the step in which the second started: no step after it.
  EXPECT_THROW(summarize_sweep_cell(64, steps({1, 3}, 3, 0)), Error);
}

TEST(ThroughputSweep, RequestsGenerateEnoughForTheOtherPrefills) {
  SweepOptions options;
  options.tokens = 32;
  options.max_batched_tokens = 512;
  EXPECT_EQ(sweep_tokens_per_stream(options, 2048, 1), 33);
  // 7 other prompts of 512 in steps of 512 - 8 tokens: 8 steps, plus a step per stream.
  EXPECT_EQ(sweep_tokens_per_stream(options, 512, 8), 32 + 8 + 8);
}

TEST(ThroughputSweep, RatioToOneStreamPerContext) {
  std::vector<SweepCell> cells(3);
  cells[0] = {.context = 8, .streams = 1, .aggregate_tok_s = 10};
  cells[1] = {.context = 8, .streams = 4, .aggregate_tok_s = 35};
  cells[2] = {.context = 16, .streams = 4, .aggregate_tok_s = 30};
  set_ratio_to_one_stream(cells);
  EXPECT_DOUBLE_EQ(cells[0].ratio_to_one_stream, 1);
  EXPECT_DOUBLE_EQ(cells[1].ratio_to_one_stream, 3.5);
  EXPECT_TRUE(std::isnan(cells[2].ratio_to_one_stream));
}

TEST(ThroughputSweep, UnionBoundReadsSharedWeightsOnceAndTheExpertsTheStreamsTouch) {
  DecodeBytes b;
  b.attention = 600;
  b.routed_experts = 400;  // top-4 of 16: 100 bytes per expert
  std::vector<SweepCell> cells(2);
  cells[0] = {.context = 8, .streams = 1, .aggregate_tok_s = 5};
  cells[1] = {.context = 8, .streams = 2, .aggregate_tok_s = 5};
  set_union_bound(cells, b, 16, 4, 1e-8);  // 10 bytes per second
  EXPECT_DOUBLE_EQ(cells[0].union_bound_tok_s, 10.0 / 1000);
  // Two streams touch 4 + 4 · 12/16 = 7 experts: 600 + 700 bytes per step of two tokens.
  EXPECT_DOUBLE_EQ(cells[1].union_bound_tok_s, 2 * 10.0 / 1300);
  EXPECT_DOUBLE_EQ(cells[1].ratio_to_union_bound, 5 / (2 * 10.0 / 1300));
  EXPECT_THROW(set_union_bound(cells, b, 16, 4, 0), Error);
}

std::vector<SweepCell> sample_cells() {
  std::vector<SweepCell> cells = {summarize_sweep_cell(128, steps({1}, 6, 0)),
                                  summarize_sweep_cell(128, steps({1, 2}, 6, 0)),
                                  summarize_sweep_cell(512, steps({2, 4}, 8, 0.001))};
  set_ratio_to_one_stream(cells);
  return cells;
}

TEST(SweepReport, CsvReadsBackWhatItWrote) {
  std::vector<SweepCell> cells = sample_cells();
  cells[0].cpu_share = std::nan("");
  cells[1].cpu_share = 0.5;
  cells[1].union_bound_tok_s = 12.5;
  cells[1].ratio_to_union_bound = 0.25;
  const std::string csv = sweep_csv(cells, "model x\nload 1.0");
  EXPECT_EQ(csv.rfind("# model x\n# load 1.0\ncontext,streams,", 0), 0u);
  const std::vector<SweepCell> back = parse_sweep_csv(csv, "a.csv");
  ASSERT_EQ(back.size(), cells.size());
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(back[i].context, cells[i].context);
    EXPECT_EQ(back[i].streams, cells[i].streams);
    EXPECT_NEAR(back[i].aggregate_tok_s, cells[i].aggregate_tok_s, 1e-3);
    EXPECT_NEAR(back[i].ttft_max_seconds, cells[i].ttft_max_seconds, 1e-4);
    EXPECT_EQ(back[i].window_tokens, cells[i].window_tokens);
    EXPECT_EQ(std::isnan(back[i].ratio_to_one_stream), std::isnan(cells[i].ratio_to_one_stream));
  }
  EXPECT_TRUE(std::isnan(back[0].cpu_share));
  EXPECT_DOUBLE_EQ(back[1].cpu_share, 0.5);
  EXPECT_TRUE(std::isnan(back[0].union_bound_tok_s));
  EXPECT_DOUBLE_EQ(back[1].union_bound_tok_s, 12.5);
  EXPECT_DOUBLE_EQ(back[1].ratio_to_union_bound, 0.25);
  EXPECT_TRUE(std::isnan(back[2].ratio_to_one_stream));  // no 1-stream cell at 512
}

TEST(SweepReport, CsvWithoutTheUnionBoundColumnsReadsAsNoBound) {
  const std::vector<SweepCell> back = parse_sweep_csv(
      "context,streams,ttft_mean_s,ttft_max_s,decode_tok_s_per_stream,aggregate_tok_s,"
      "ratio_to_1_stream,window_tokens,tokens_per_stream,cpu_share\n128,2,0.1,0.2,3,6,,4,5,0.9\n",
      "old.csv");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(back[0].aggregate_tok_s, 6);
  EXPECT_TRUE(std::isnan(back[0].union_bound_tok_s));
  EXPECT_TRUE(std::isnan(back[0].ratio_to_union_bound));
}

TEST(SweepReport, ComparingRunsWithNoCellInCommonIsAnError) {
  const std::vector<SweepCell> cells = sample_cells();
  std::vector<SweepCell> other = cells;
  for (SweepCell& c : other) c.context += 1000;
  const std::string same = sweep_compare_text({"a", cells}, {"b", cells});
  EXPECT_NE(same.find(" 1.00x"), std::string::npos) << same;
  try {
    sweep_compare_text({"a", cells}, {"b", other});
    ADD_FAILURE() << "runs with no cell in common compared";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("a and b have no cell (context, streams) in common: a has (", 0), 0u)
        << message;
  }
}

TEST(SweepReport, BadCsvNamesFileLineAndColumn) {
  const auto error_of = [](const std::string& text) {
    try {
      parse_sweep_csv(text, "b.csv");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string header = sweep_csv({}, "");
  EXPECT_NE(error_of("a,b\n1,2\n").find("b.csv:1: the header has no column 'context'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "128,2,0.1,0.2,x,3,,4,5\n")
                .find("b.csv:2: column 'decode_tok_s_per_stream': 'x' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of(header + "128,0,0.1,0.2,1,3,,4,5\n").find("column 'streams'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "128,2\n").find("b.csv:2: no value for column"), std::string::npos);
  EXPECT_NE(error_of(header).find("b.csv: no rows"), std::string::npos);
}

TEST(SweepReport, TablesHaveARowPerContextAndAColumnPerStreamCount) {
  const std::string text = sweep_table_text(sample_cells());
  EXPECT_NE(text.find("| Context | 1 stream | 2 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 512 | | "), std::string::npos) << text;  // no 1-stream cell at 512
  EXPECT_NE(text.find("1.00x"), std::string::npos) << text;
}

TEST(SweepReport, ChartHasALinePerContextAndRun) {
  const std::vector<SweepCell> cells = sample_cells();
  const Chart one = sweep_chart({{"run", cells}}, "sub");
  ASSERT_EQ(one.panels.size(), 2u);
  ASSERT_EQ(one.panels[0].series.size(), 2u);  // contexts 128 and 512
  EXPECT_EQ(one.panels[0].series[0].label, "ctx 128");
  EXPECT_EQ(one.panels[0].series[0].points.size(), 2u);
  EXPECT_EQ(one.panels[1].series[0].points[1].second, cells[1].aggregate_tok_s);
  EXPECT_EQ(one.panels[0].series[1].points[0].first, 2);  // 512 has only the 2-stream cell
  const Chart two = sweep_chart({{"A", cells}, {"B", cells}}, "sub");
  ASSERT_EQ(two.panels[1].series.size(), 4u);
  EXPECT_EQ(two.panels[1].series[2].label, "B ctx 128");
  EXPECT_FALSE(two.panels[1].series[0].dashed);
  EXPECT_TRUE(two.panels[1].series[2].dashed);
  EXPECT_EQ(two.panels[1].series[0].color, two.panels[1].series[2].color);  // same context
  EXPECT_NE(two.panels[1].series[0].color, two.panels[1].series[1].color);
}

TEST(ThroughputSweep, RunsEveryCellThroughTheEngine) {
  ModelOptions model_options;
  model_options.threads = 1;
  auto model = Model::load(runtime_test::tiny_model_dir(Arch::kM2), model_options);
  const BpeTokenizer tokenizer =
      BpeTokenizer::from_file(runtime_test::tiny_model_dir(Arch::kM2) + "/tokenizer.json");
  SweepOptions options;
  options.contexts = {8, 40};
  options.streams = {1, 3};
  options.tokens = 4;
  options.max_batched_tokens = 48;  // the 3-stream prompts of 40 take several steps
  options.threads = 1;
  std::atomic<int64_t> processed{0};
  options.on_tokens = [&processed](int64_t n) { processed += n; };
  const std::vector<SweepCell> cells = run_throughput_sweep(*model, tokenizer, options);
  ASSERT_EQ(cells.size(), 4u);
  for (const SweepCell& c : cells) {
    SCOPED_TRACE(::testing::Message() << "context " << c.context << " streams " << c.streams);
    EXPECT_EQ(c.tokens_per_stream, sweep_tokens_per_stream(options, c.context, c.streams));
    EXPECT_GT(c.window_tokens, 0);
    EXPECT_GT(c.aggregate_tok_s, 0);
    EXPECT_GT(c.ttft_max_seconds, 0);
    EXPECT_GE(c.ttft_max_seconds, c.ttft_mean_seconds);
    EXPECT_GT(c.cpu_share, 0);
  }
  EXPECT_EQ(cells[0].context, 8);
  EXPECT_EQ(cells[1].streams, 3);
  EXPECT_DOUBLE_EQ(cells[2].ratio_to_one_stream, 1);
  EXPECT_EQ(processed.load(), sweep_total_tokens(options));
  // A 3-stream cell of 40-token prompts in steps of 48 tokens: the first stream decodes while the
  // others' prompts are prefilled, yet the window holds at least the asked-for steps.
  EXPECT_GE(cells[3].window_tokens, 3 * options.tokens);

  SweepOptions bad = options;
  bad.contexts = {8, 1 << 20};
  try {
    run_throughput_sweep(*model, tokenizer, bad);
    ADD_FAILURE() << "a context beyond the model's positions ran";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--sweep-contexts"), std::string::npos) << e.what();
  }
  bad = options;
  bad.streams = {48};
  EXPECT_THROW(run_throughput_sweep(*model, tokenizer, bad), Error);
}

}  // namespace
}  // namespace minimax
