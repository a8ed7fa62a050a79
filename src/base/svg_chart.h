// Line charts as standalone SVG text, drawn without any plotting program: one or more panels side
// by side (axes from zero, "nice" ticks, grid, axis labels), a line with point markers per series,
// and one legend for the whole figure. For benchmark pictures (`minimax bench --sweep --chart`).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace minimax {

struct ChartSeries {
  std::string label;                              // legend text; the same label in two panels is
                                                  // one legend entry
  std::vector<std::pair<double, double>> points;  // (x, y), joined in this order
  int color = 0;                                  // index into a fixed palette (wraps around)
  bool dashed = false;
};

struct ChartPanel {
  std::string title, x_label, y_label;
  // x on a base-2 logarithmic scale ticked at the points' x values (e.g. 1, 2, 4, 8 streams);
  // otherwise linear from zero with nice ticks. Logarithmic x values must be positive.
  bool log2_x = false;
  std::vector<ChartSeries> series;
};

struct Chart {
  std::string title;
  std::string subtitle;  // smaller lines under the title, split at '\n' (the model, the machine)
  std::vector<ChartPanel> panels;
};

// The whole document, starting with "<svg" and ending with "</svg>\n". Text is XML-escaped.
// Error when a panel has no point at all or a value is not finite.
std::string render_svg_chart(const Chart& chart);

// Ticks 0, s, 2s, ... up to the first one >= max, with s = 1, 2 or 5 × 10^k chosen so that there
// are about `target` intervals; {0, 1} when max <= 0.
std::vector<double> nice_ticks(double max, int target = 5);

}  // namespace minimax
