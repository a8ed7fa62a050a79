// What `minimax bench --sweep` writes: the cells as CSV (and read back for --compare), as text
// tables (one row per cell, and the seed's context × streams tables), and as a chart (x =
// streams, decode tok/s per stream and aggregate, one line per context and run).
#pragma once

#include <string>
#include <vector>

#include "base/svg_chart.h"
#include "runtime/throughput_sweep.h"

namespace minimax {

// One sweep's cells under a label (a file name, a layout).
struct SweepRun {
  std::string label;
  std::vector<SweepCell> cells;
};

// A header line, then one line per cell; `comment` (may be empty) goes first as "# ..." lines.
// ratio_to_one_stream NaN is an empty field.
std::string sweep_csv(const std::vector<SweepCell>& cells, const std::string& comment);
// Reads what sweep_csv wrote: lines starting with '#' and empty lines are skipped, columns are
// found by their header names (others are ignored). Errors name `origin`, the line and the column.
std::vector<SweepCell> parse_sweep_csv(const std::string& text, const std::string& origin);

// One aligned row per cell, then the per-stream and aggregate decode tok/s as Markdown tables
// with a row per context and a column per stream count.
std::string sweep_table_text(const std::vector<SweepCell>& cells);
// Cells present in both runs side by side: aggregate and per-stream tok/s and their ratio b / a.
// Error naming both runs and their cells when they have none in common (an empty table would read
// as a comparison that found nothing).
std::string sweep_compare_text(const SweepRun& a, const SweepRun& b);

// Two panels (per-stream and aggregate decode tok/s against streams, log2 x); a colour per
// context, solid lines for the first run and dashed ones for the others. Series labels are
// "ctx N", prefixed by the run's label when there is more than one run.
Chart sweep_chart(const std::vector<SweepRun>& runs, const std::string& subtitle);

}  // namespace minimax
