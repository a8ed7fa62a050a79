// SVG line charts: fixed layout, absolute coordinates (no transforms but the rotated y label), so
// that the output is easy to check by reading it.
#include "base/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "base/error.h"

namespace minimax {
namespace {

// Figure layout in pixels.
constexpr double kPanelWidth = 440, kPanelHeight = 320;
constexpr double kPlotLeft = 64, kPlotRight = 16, kPlotTop = 36, kPlotBottom = 52;
constexpr double kLegendWidth = 200, kLegendRow = 22;
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string color(int index) {
  constexpr int n = sizeof(kPalette) / sizeof(kPalette[0]);
  return kPalette[((index % n) + n) % n];
}

std::string number(double v) { return fmt::format("{:g}", v); }

// Maps data values to pixels inside one panel's plot area.
class Axes {
 public:
  Axes(const ChartPanel& panel, double left, double top) {
    left_ = left + kPlotLeft;
    right_ = left + kPanelWidth - kPlotRight;
    top_ = top + kPlotTop;
    bottom_ = top + kPanelHeight - kPlotBottom;
    double max_x = 0, max_y = 0;
    std::set<double> xs;
    for (const ChartSeries& s : panel.series)
      for (const auto& [x, y] : s.points) {
        if (!std::isfinite(x) || !std::isfinite(y))
          fail("chart '{}': series '{}' has a value that is not finite", panel.title, s.label);
        if (panel.log2_x && x <= 0)
          fail("chart '{}': series '{}' has x = {} on a logarithmic axis", panel.title, s.label, x);
        xs.insert(x);
        max_x = std::max(max_x, x);
        max_y = std::max(max_y, y);
      }
    if (xs.empty()) fail("chart '{}': no points to draw", panel.title);
    log2_x_ = panel.log2_x;
    if (log2_x_) {
      x_ticks_.assign(xs.begin(), xs.end());
      x_lo_ = std::log2(*xs.begin());
      x_hi_ = std::log2(*xs.rbegin());
      if (x_hi_ == x_lo_) x_lo_ -= 1, x_hi_ += 1;
    } else {
      x_ticks_ = nice_ticks(max_x);
      x_lo_ = 0;
      x_hi_ = x_ticks_.back();
    }
    y_ticks_ = nice_ticks(max_y);
  }

  double px(double x) const {
    // Logarithmic axes keep the end points off the frame: 5% of the width at each side.
    const double pad = log2_x_ ? 0.05 * (right_ - left_) : 0;
    const double t = ((log2_x_ ? std::log2(x) : x) - x_lo_) / (x_hi_ - x_lo_);
    return left_ + pad + t * (right_ - left_ - 2 * pad);
  }
  double py(double y) const { return bottom_ - y / y_ticks_.back() * (bottom_ - top_); }

  double left_, right_, top_, bottom_;
  std::vector<double> x_ticks_, y_ticks_;

 private:
  bool log2_x_ = false;
  double x_lo_ = 0, x_hi_ = 1;
};

void draw_panel(std::string& out, const ChartPanel& panel, double left, double top) {
  const Axes a(panel, left, top);
  out += "<g class=\"panel\">\n";
  out += fmt::format(
      "<text class=\"panel-title\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
      "font-size=\"14\">{}</text>\n",
      (a.left_ + a.right_) / 2, top + 20, escape(panel.title));
  for (double t : a.y_ticks_) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
        "stroke=\"#e0e0e0\"/>\n",
        a.left_, a.py(t), a.right_, a.py(t));
    out += fmt::format(
        "<text class=\"tick-y\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        a.left_ - 6, a.py(t) + 4, number(t));
  }
  for (double t : a.x_ticks_)
    out += fmt::format(
        "<text class=\"tick-x\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
        a.px(t), a.bottom_ + 18, number(t));
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" "
      "stroke=\"black\"/>\n<line class=\"axis\" x1=\"{0:.1f}\" y1=\"{3:.1f}\" x2=\"{0:.1f}\" "
      "y2=\"{1:.1f}\" stroke=\"black\"/>\n",
      a.left_, a.bottom_, a.right_, a.top_);
  out += fmt::format(
      "<text class=\"x-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
      (a.left_ + a.right_) / 2, a.bottom_ + 40, escape(panel.x_label));
  const double label_x = a.left_ - 48, label_y = (a.top_ + a.bottom_) / 2;
  out += fmt::format(
      "<text class=\"y-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" text-anchor=\"middle\" "
      "transform=\"rotate(-90 {0:.1f} {1:.1f})\">{2}</text>\n",
      label_x, label_y, escape(panel.y_label));
  for (const ChartSeries& s : panel.series) {
    if (s.points.empty()) continue;
    std::string points;
    for (const auto& [x, y] : s.points)
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", a.px(x), a.py(y));
    out += fmt::format(
        "<polyline class=\"series\" data-label=\"{}\" points=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"2\"{}/>\n",
        escape(s.label), points, color(s.color), s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    for (const auto& [x, y] : s.points)
      out += fmt::format(
          "<circle class=\"point\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"><title>{}: "
          "{}, {}</title></circle>\n",
          a.px(x), a.py(y), color(s.color), escape(s.label), number(x), fmt::format("{:.4g}", y));
  }
  out += "</g>\n";
}

}  // namespace

std::vector<double> nice_ticks(double max, int target) {
  if (!(max > 0) || !std::isfinite(max)) return {0, 1};
  const double raw = max / std::max(target, 1);
  // step = mantissa × 10^exponent; a tick is i × mantissa scaled by an exact power of ten (a
  // division for negative exponents), so that 3 × 0.2 is 0.6 and not 0.6000000000000001.
  int exponent = static_cast<int>(std::floor(std::log10(raw)));
  double mantissa = 10;
  for (double m : {1.0, 2.0, 5.0})
    if (m * std::pow(10.0, exponent) >= raw) {
      mantissa = m;
      break;
    }
  const double power = std::pow(10.0, std::abs(exponent));
  const auto tick = [&](int i) {
    return exponent < 0 ? i * mantissa / power : i * mantissa * power;
  };
  std::vector<double> ticks = {0};
  for (int i = 1; ticks.back() < max * (1 - 1e-12); ++i) ticks.push_back(tick(i));
  return ticks;
}

std::string render_svg_chart(const Chart& chart) {
  if (chart.panels.empty()) fail("chart '{}': no panels", chart.title);
  std::vector<std::string> subtitle;
  for (size_t begin = 0; begin < chart.subtitle.size();) {
    const size_t end = std::min(chart.subtitle.find('\n', begin), chart.subtitle.size());
    subtitle.push_back(chart.subtitle.substr(begin, end - begin));
    begin = end + 1;
  }
  const double top = 44 + 18 * static_cast<double>(subtitle.size());
  const double width = chart.panels.size() * kPanelWidth + kLegendWidth;
  const double height = top + kPanelHeight;
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text class=\"title\" x=\"{2:.1f}\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">{3}"
      "</text>\n",
      width, height, width / 2, escape(chart.title));
  for (size_t i = 0; i < subtitle.size(); ++i)
    out += fmt::format(
        "<text class=\"subtitle\" x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\" "
        "fill=\"#555\">{}</text>\n",
        width / 2, 48 + 18 * static_cast<double>(i), escape(subtitle[i]));
  for (size_t i = 0; i < chart.panels.size(); ++i)
    draw_panel(out, chart.panels[i], i * kPanelWidth, top);
  // One legend entry per label, in order of first appearance.
  out += "<g class=\"legend\">\n";
  std::set<std::string> seen;
  double y = top + kPlotTop + 8;
  const double x = chart.panels.size() * kPanelWidth + 8;
  for (const ChartPanel& panel : chart.panels)
    for (const ChartSeries& s : panel.series) {
      if (!seen.insert(s.label).second) continue;
      out += fmt::format(
          "<line class=\"legend-line\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
          "stroke=\"{}\" stroke-width=\"2\"{}/>\n<text class=\"legend-label\" x=\"{:.1f}\" "
          "y=\"{:.1f}\">{}</text>\n",
          x, y, x + 28, y, color(s.color), s.dashed ? " stroke-dasharray=\"6 4\"" : "", x + 34,
          y + 4, escape(s.label));
      y += kLegendRow;
    }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace minimax
