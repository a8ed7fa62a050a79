// CSV, text tables and the chart of throughput sweeps.
#include "runtime/sweep_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "base/error.h"

namespace minimax {
namespace {

// The CSV columns in order; the names are the file format.
constexpr const char* kColumns[] = {"context",
                                    "streams",
                                    "ttft_mean_s",
                                    "ttft_max_s",
                                    "decode_tok_s_per_stream",
                                    "aggregate_tok_s",
                                    "ratio_to_1_stream",
                                    "window_tokens",
                                    "tokens_per_stream",
                                    "cpu_share",
                                    "union_bound_tok_s",
                                    "ratio_to_union_bound"};
constexpr size_t kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);
// Columns from this one on are optional when read (files written before they existed): absent,
// their values are NaN.
constexpr size_t kFirstOptionalColumn = 10;

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, sep)) out.push_back(field);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  return s;
}

double parse_number(const std::string& field, const std::string& where, bool allow_empty) {
  if (field.empty() && allow_empty) return std::nan("");
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != field.size() || !std::isfinite(value))
    fail("{}: '{}' is not a number", where, field);
  return value;
}

int64_t parse_count(const std::string& field, const std::string& where) {
  const double v = parse_number(field, where, false);
  if (v < 1 || v != std::floor(v)) fail("{}: '{}' is not a positive whole number", where, field);
  return static_cast<int64_t>(v);
}

// NaN (no 1-stream cell, no thread count) is an empty field.
std::string optional_text(double r) { return std::isnan(r) ? "" : fmt::format("{:.3f}", r); }

// Sorted distinct contexts and stream counts of `cells`.
std::pair<std::vector<int64_t>, std::vector<int64_t>> axes_of(const std::vector<SweepCell>& cells) {
  std::set<int64_t> contexts, streams;
  for (const SweepCell& c : cells) contexts.insert(c.context), streams.insert(c.streams);
  return {{contexts.begin(), contexts.end()}, {streams.begin(), streams.end()}};
}

std::string markdown_matrix(const std::vector<SweepCell>& cells, double SweepCell::*value) {
  const auto [contexts, streams] = axes_of(cells);
  std::string out = "| Context |";
  for (int64_t s : streams) out += s == 1 ? " 1 stream |" : fmt::format(" {} |", s);
  out += "\n|---|";
  for (size_t i = 0; i < streams.size(); ++i) out += "---|";
  out += "\n";
  for (int64_t c : contexts) {
    out += fmt::format("| {} |", c);
    for (int64_t s : streams) {
      auto it = std::find_if(cells.begin(), cells.end(),
                             [&](const SweepCell& x) { return x.context == c && x.streams == s; });
      out += it == cells.end() ? " |" : fmt::format(" {:.1f} |", (*it).*value);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string sweep_csv(const std::vector<SweepCell>& cells, const std::string& comment) {
  std::string out;
  if (!comment.empty()) {
    std::istringstream lines(comment);
    for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  }
  for (size_t i = 0; i < kNumColumns; ++i) out += std::string(i ? "," : "") + kColumns[i];
  out += "\n";
  for (const SweepCell& c : cells)
    out +=
        fmt::format("{},{},{:.4f},{:.4f},{:.3f},{:.3f},{},{},{},{},{},{}\n", c.context, c.streams,
                    c.ttft_mean_seconds, c.ttft_max_seconds, c.decode_tok_s_per_stream,
                    c.aggregate_tok_s, optional_text(c.ratio_to_one_stream), c.window_tokens,
                    c.tokens_per_stream, optional_text(c.cpu_share),
                    optional_text(c.union_bound_tok_s), optional_text(c.ratio_to_union_bound));
  return out;
}

std::vector<SweepCell> parse_sweep_csv(const std::string& text, const std::string& origin) {
  std::istringstream in(text);
  std::vector<int> index;  // column of each kColumns entry in the file
  std::vector<SweepCell> cells;
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = split(line, ',');
    if (index.empty()) {
      for (size_t column = 0; column < kNumColumns; ++column) {
        const char* name = kColumns[column];
        auto it = std::find_if(fields.begin(), fields.end(),
                               [&](const std::string& f) { return trim(f) == name; });
        if (it == fields.end() && column >= kFirstOptionalColumn) {
          index.push_back(-1);
          continue;
        }
        if (it == fields.end())
          fail("{}:{}: the header has no column '{}' (not a `minimax bench --sweep` CSV?)", origin,
               line_number, name);
        index.push_back(static_cast<int>(it - fields.begin()));
      }
      continue;
    }
    const auto field = [&](size_t column) {
      const int i = index[column];
      if (i < 0)  // an optional column the file lacks
        return std::pair(std::string(), std::string(kColumns[column]));
      if (i >= static_cast<int>(fields.size()))
        fail("{}:{}: no value for column '{}'", origin, line_number, kColumns[column]);
      return std::pair(trim(fields[i]),
                       fmt::format("{}:{}: column '{}'", origin, line_number, kColumns[column]));
    };
    const auto number = [&](size_t column, bool allow_empty = false) {
      const auto [value, where] = field(column);
      return parse_number(value, where, allow_empty);
    };
    const auto count = [&](size_t column) {
      const auto [value, where] = field(column);
      return parse_count(value, where);
    };
    SweepCell c;
    c.context = count(0);
    c.streams = count(1);
    c.ttft_mean_seconds = number(2);
    c.ttft_max_seconds = number(3);
    c.decode_tok_s_per_stream = number(4);
    c.aggregate_tok_s = number(5);
    c.ratio_to_one_stream = number(6, true);
    c.window_tokens = count(7);
    c.tokens_per_stream = count(8);
    c.cpu_share = number(9, true);
    c.union_bound_tok_s = number(10, true);
    c.ratio_to_union_bound = number(11, true);
    cells.push_back(c);
  }
  if (index.empty()) fail("{}: no header line", origin);
  if (cells.empty()) fail("{}: no rows", origin);
  return cells;
}

std::string sweep_table_text(const std::vector<SweepCell>& cells) {
  std::string out =
      fmt::format("{:>8} {:>8} {:>10} {:>10} {:>16} {:>16} {:>12} {:>10} {:>12} {:>9}\n", "context",
                  "streams", "TTFT mean", "TTFT max", "tok/s per stream", "aggregate tok/s",
                  "vs 1 stream", "CPU share", "union bound", "vs bound");
  const auto ratio = [](double v) {
    return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}x", v);
  };
  const auto share = [](double v) {
    return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v);
  };
  const auto bound = [](double v) {
    return std::isnan(v) ? std::string("-") : fmt::format("{:.2f}", v);
  };
  for (const SweepCell& c : cells)
    out += fmt::format(
        "{:>8} {:>8} {:>9.3f}s {:>9.3f}s {:>16.2f} {:>16.2f} {:>12} {:>10} {:>12} {:>9}\n",
        c.context, c.streams, c.ttft_mean_seconds, c.ttft_max_seconds, c.decode_tok_s_per_stream,
        c.aggregate_tok_s, ratio(c.ratio_to_one_stream), share(c.cpu_share),
        bound(c.union_bound_tok_s), share(c.ratio_to_union_bound));
  out += "\nDecode tok/s per stream, all streams decoding together:\n\n";
  out += markdown_matrix(cells, &SweepCell::decode_tok_s_per_stream);
  out += "\nAggregate decode tok/s:\n\n";
  out += markdown_matrix(cells, &SweepCell::aggregate_tok_s);
  return out;
}

std::string sweep_compare_text(const SweepRun& a, const SweepRun& b) {
  std::string out =
      fmt::format("{:>8} {:>8} {:>14} {:>14} {:>8}   {:>14} {:>14} {:>8}\n", "context", "streams",
                  "aggregate A", "aggregate B", "B/A", "per stream A", "per stream B", "B/A");
  int common = 0;
  for (const SweepCell& x : a.cells)
    for (const SweepCell& y : b.cells) {
      if (x.context != y.context || x.streams != y.streams) continue;
      ++common;
      out += fmt::format(
          "{:>8} {:>8} {:>14.2f} {:>14.2f} {:>7.2f}x   {:>14.2f} {:>14.2f} {:>7.2f}x\n", x.context,
          x.streams, x.aggregate_tok_s, y.aggregate_tok_s, y.aggregate_tok_s / x.aggregate_tok_s,
          x.decode_tok_s_per_stream, y.decode_tok_s_per_stream,
          y.decode_tok_s_per_stream / x.decode_tok_s_per_stream);
    }
  if (common == 0) {
    const auto cells_of = [](const SweepRun& run) {
      std::string list;
      for (const SweepCell& c : run.cells)
        list += fmt::format("{}({}, {})", list.empty() ? "" : " ", c.context, c.streams);
      return list.empty() ? std::string("none") : list;
    };
    fail("{} and {} have no cell (context, streams) in common: {} has {}; {} has {}", a.label,
         b.label, a.label, cells_of(a), b.label, cells_of(b));
  }
  return fmt::format("A = {}\nB = {}\n", a.label, b.label) + out;
}

Chart sweep_chart(const std::vector<SweepRun>& runs, const std::string& subtitle) {
  std::vector<SweepCell> all;
  for (const SweepRun& run : runs) all.insert(all.end(), run.cells.begin(), run.cells.end());
  const std::vector<int64_t> contexts = axes_of(all).first;
  ChartPanel per_stream{"Decode tok/s per stream (all streams decoding)",
                        "concurrent streams",
                        "tok/s per stream",
                        true,
                        {}};
  ChartPanel aggregate{"Aggregate decode tok/s", "concurrent streams", "tok/s", true, {}};
  for (size_t r = 0; r < runs.size(); ++r)
    for (size_t ci = 0; ci < contexts.size(); ++ci) {
      std::vector<SweepCell> cells;
      for (const SweepCell& c : runs[r].cells)
        if (c.context == contexts[ci]) cells.push_back(c);
      if (cells.empty()) continue;
      std::sort(cells.begin(), cells.end(),
                [](const SweepCell& x, const SweepCell& y) { return x.streams < y.streams; });
      const std::string label = (runs.size() > 1 ? runs[r].label + " " : std::string()) +
                                fmt::format("ctx {}", contexts[ci]);
      ChartSeries p{label, {}, static_cast<int>(ci), r > 0};
      ChartSeries g = p;
      for (const SweepCell& c : cells) {
        p.points.emplace_back(static_cast<double>(c.streams), c.decode_tok_s_per_stream);
        g.points.emplace_back(static_cast<double>(c.streams), c.aggregate_tok_s);
      }
      per_stream.series.push_back(std::move(p));
      aggregate.series.push_back(std::move(g));
    }
  std::string title = "Decode throughput by concurrent streams";
  if (runs.size() > 1) {
    title += ":";
    for (size_t r = 0; r < runs.size(); ++r)
      title += fmt::format("{} {} ({})", r ? "," : "", runs[r].label, r ? "dashed" : "solid");
  }
  return {title, subtitle, {per_stream, aggregate}};
}

}  // namespace minimax
