// render_svg_chart read back as XML-ish text: the document is well nested, has one polyline per
// series whose points follow the data (higher values drawn higher, larger x further right), the
// tick, axis, title and legend labels, escaped text, dashed lines where asked; nice_ticks.
#include "base/svg_chart.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "base/error.h"

namespace minimax {
namespace {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;  // character data directly after the start tag
};

// Parses tags with a regex, checks that every start tag is closed in order, and returns the
// elements in document order.
std::vector<Element> parse_svg(const std::string& svg) {
  static const std::regex tag(
      R"re(<(/?)([a-zA-Z][\w-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(/?)>([^<]*))re");
  static const std::regex attr(R"re(([\w:-]+)="([^"]*)")re");
  std::vector<Element> elements;
  std::vector<std::string> open;
  size_t consumed = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    EXPECT_EQ(static_cast<size_t>(m.position()), consumed)
        << "text outside tags before " << m.str().substr(0, 40);
    consumed = m.position() + m.length();
    if (m[1] == "/") {
      EXPECT_FALSE(open.empty()) << "stray </" << m[2] << ">";
      if (open.empty()) continue;
      EXPECT_EQ(open.back(), m[2]) << "mis-nested tags";
      open.pop_back();
      continue;
    }
    Element e;
    e.name = m[2];
    e.text = m[5];
    const std::string attrs = m[3];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr);
         a != std::sregex_iterator(); ++a)
      e.attrs[(*a)[1]] = (*a)[2];
    if (m[4] != "/") open.push_back(e.name);
    elements.push_back(std::move(e));
  }
  EXPECT_EQ(consumed, svg.size()) << "the document does not end with a tag";
  EXPECT_TRUE(open.empty()) << "unclosed <" << (open.empty() ? "" : open.back()) << ">";
  return elements;
}

std::vector<const Element*> with_class(const std::vector<Element>& all, const std::string& cls) {
  std::vector<const Element*> out;
  for (const Element& e : all)
    if (auto it = e.attrs.find("class"); it != e.attrs.end() && it->second == cls)
      out.push_back(&e);
  return out;
}

std::vector<std::pair<double, double>> polyline_points(const Element& e) {
  std::vector<std::pair<double, double>> out;
  std::istringstream in(e.attrs.at("points"));
  std::string pair;
  while (in >> pair) {
    const size_t comma = pair.find(',');
    out.emplace_back(std::stod(pair.substr(0, comma)), std::stod(pair.substr(comma + 1)));
  }
  return out;
}

Chart two_panel_chart() {
  ChartPanel per_stream{"per stream", "streams", "tok/s", true, {}};
  per_stream.series = {{"ctx 512", {{1, 30}, {2, 28}, {4, 25}, {8, 20}}, 0, false},
                       {"ctx 2048", {{1, 27}, {2, 24}, {4, 21}, {8, 15}}, 1, false}};
  ChartPanel aggregate{"aggregate", "streams", "tok/s", true, {}};
  aggregate.series = {{"ctx 512", {{1, 30}, {2, 56}, {4, 100}, {8, 160}}, 0, false},
                      {"ctx 2048", {{1, 27}, {2, 48}, {4, 84}, {8, 120}}, 1, false}};
  return {"Decode <sweep> & more", "model: bench", {per_stream, aggregate}};
}

TEST(SvgChart, OnePolylinePerSeriesFollowingTheData) {
  const Chart chart = two_panel_chart();
  const std::string svg = render_svg_chart(chart);
  ASSERT_EQ(svg.rfind("<svg", 0), 0u);
  const std::vector<Element> all = parse_svg(svg);
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0].attrs.at("xmlns"), "http://www.w3.org/2000/svg");
  const auto lines = with_class(all, "series");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(with_class(all, "point").size(), 16u);
  EXPECT_EQ(with_class(all, "panel").size(), 2u);
  for (size_t i = 0; i < lines.size(); ++i) {
    const ChartSeries& s = chart.panels[i / 2].series[i % 2];
    EXPECT_EQ(lines[i]->attrs.at("data-label"), s.label);
    const auto px = polyline_points(*lines[i]);
    ASSERT_EQ(px.size(), s.points.size());
    for (size_t p = 1; p < px.size(); ++p) {
      EXPECT_GT(px[p].first, px[p - 1].first) << "x grows to the right";
      // SVG y grows downwards: a larger value is drawn higher (smaller y).
      const bool larger = s.points[p].second > s.points[p - 1].second;
      EXPECT_EQ(px[p].second < px[p - 1].second, larger) << s.label << " point " << p;
    }
  }
  // Log2 x: 1, 2, 4, 8 are equally spaced.
  const auto px = polyline_points(*lines[0]);
  EXPECT_NEAR(px[1].first - px[0].first, px[3].first - px[2].first, 0.2);
  EXPECT_NEAR(px[1].first - px[0].first, px[2].first - px[1].first, 0.2);
}

TEST(SvgChart, LabelsTicksLegendAndEscaping) {
  const std::vector<Element> all = parse_svg(render_svg_chart(two_panel_chart()));
  EXPECT_EQ(with_class(all, "title").at(0)->text, "Decode &lt;sweep&gt; &amp; more");
  EXPECT_EQ(with_class(all, "subtitle").at(0)->text, "model: bench");
  const auto titles = with_class(all, "panel-title");
  ASSERT_EQ(titles.size(), 2u);
  EXPECT_EQ(titles[0]->text, "per stream");
  EXPECT_EQ(titles[1]->text, "aggregate");
  EXPECT_EQ(with_class(all, "x-label").at(0)->text, "streams");
  EXPECT_EQ(with_class(all, "y-label").at(1)->text, "tok/s");
  std::vector<std::string> x_ticks;
  for (const Element* e : with_class(all, "tick-x")) x_ticks.push_back(e->text);
  EXPECT_EQ(x_ticks, (std::vector<std::string>{"1", "2", "4", "8", "1", "2", "4", "8"}));
  // Each panel has its own y range: up to 30, and up to 160 in steps of 50.
  std::vector<std::string> y_ticks;
  for (const Element* e : with_class(all, "tick-y")) y_ticks.push_back(e->text);
  EXPECT_EQ(y_ticks,
            (std::vector<std::string>{"0", "10", "20", "30", "0", "50", "100", "150", "200"}));
  // One legend entry per label, though each label has a line in both panels.
  const auto legend = with_class(all, "legend-label");
  ASSERT_EQ(legend.size(), 2u);
  EXPECT_EQ(legend[0]->text, "ctx 512");
  EXPECT_EQ(legend[1]->text, "ctx 2048");
  EXPECT_NE(with_class(all, "legend-line")[0]->attrs.at("stroke"),
            with_class(all, "legend-line")[1]->attrs.at("stroke"));
}

TEST(SvgChart, DashedSeriesAndLinearAxis) {
  ChartPanel panel{"p", "x", "y", false, {}};
  panel.series = {{"A", {{0, 1}, {3, 2}}, 0, false}, {"B", {{0, 2}, {3, 1}}, 0, true}};
  const std::vector<Element> all = parse_svg(render_svg_chart({"t", "first\nsecond", {panel}}));
  const auto subtitle = with_class(all, "subtitle");
  ASSERT_EQ(subtitle.size(), 2u);
  EXPECT_EQ(subtitle[1]->text, "second");
  const auto lines = with_class(all, "series");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]->attrs.count("stroke-dasharray"), 0u);
  EXPECT_EQ(lines[1]->attrs.count("stroke-dasharray"), 1u);
  std::vector<std::string> x_ticks;
  for (const Element* e : with_class(all, "tick-x")) x_ticks.push_back(e->text);
  EXPECT_EQ(x_ticks, (std::vector<std::string>{"0", "1", "2", "3"}));
  // Linear x from zero: x = 0 sits on the y axis.
  const auto axes = with_class(all, "axis");
  EXPECT_EQ(polyline_points(*lines[0])[0].first, std::stod(axes[1]->attrs.at("x1")));
}

TEST(SvgChart, BadDataIsAnError) {
  ChartPanel empty{"empty panel", "x", "y", false, {{"A", {}, 0, false}}};
  EXPECT_THROW(render_svg_chart({"t", "", {empty}}), Error);
  ChartPanel log_zero{"log", "x", "y", true, {{"A", {{0, 1}}, 0, false}}};
  EXPECT_THROW(render_svg_chart({"t", "", {log_zero}}), Error);
  ChartPanel nan{"nan", "x", "y", false, {{"A", {{1, std::nan("")}}, 0, false}}};
  EXPECT_THROW(render_svg_chart({"t", "", {nan}}), Error);
  EXPECT_THROW(render_svg_chart({"t", "", {}}), Error);
}

TEST(NiceTicks, StepsOfOneTwoFive) {
  EXPECT_EQ(nice_ticks(160), (std::vector<double>{0, 50, 100, 150, 200}));
  EXPECT_EQ(nice_ticks(30), (std::vector<double>{0, 10, 20, 30}));
  EXPECT_EQ(nice_ticks(31), (std::vector<double>{0, 10, 20, 30, 40}));
  EXPECT_EQ(nice_ticks(0.9), (std::vector<double>{0, 0.2, 0.4, 0.6, 0.8, 1.0}));
  EXPECT_EQ(nice_ticks(0), (std::vector<double>{0, 1}));
  EXPECT_EQ(nice_ticks(std::nan("")), (std::vector<double>{0, 1}));
}

}  // namespace
}  // namespace minimax
