// The gates' table and JSON.
#include "gates/report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace minimax::gates {
namespace {

std::vector<GateResult> sample() {
  return {{"golden prompts", "10/10 (100.0%)", ">= 10/10 (100%)", true, {}},
          {"arithmetic",
           "44/50 (88.0%)",
           ">= 45/50 (90%)",
           false,
           {"arithmetic 'What is 1 + 2?': expected '3', got '4'", "second", "third"}}};
}

TEST(Table, RowsAreAlignedAndVerdictsShown) {
  const std::string table = format_table(sample());
  std::istringstream lines(table);
  std::string header, rule, first, second;
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header.rfind("gate", 0), 0u);
  // Every column starts at the same offset in each row.
  EXPECT_EQ(first.find("10/10 (100.0%)"), header.find("measured"));
  EXPECT_EQ(second.find("44/50 (88.0%)"), header.find("measured"));
  EXPECT_EQ(first.find(">= 10/10"), header.find("threshold"));
  EXPECT_EQ(second.find(">= 45/50"), header.find("threshold"));
  EXPECT_EQ(rule.find("  -"), header.find("measured") - 2);
  EXPECT_EQ(first.find("pass"), header.find("result"));
  EXPECT_EQ(second.find("FAIL"), header.find("result"));
  EXPECT_NE(table.find("arithmetic:\n  - arithmetic 'What is 1 + 2?': expected '3', got '4'"),
            std::string::npos);
  EXPECT_NE(table.find("1 of 2 gates FAILED"), std::string::npos);
}

TEST(Table, DetailsAreCappedAndAllPassSaysSo) {
  const std::string capped = format_table(sample(), 1);
  EXPECT_NE(capped.find("... and 2 more"), std::string::npos);
  EXPECT_EQ(capped.find("second"), std::string::npos);
  std::vector<GateResult> good = sample();
  good[1].passed = true;
  good[1].details.clear();
  EXPECT_NE(format_table(good).find("all 2 gates passed"), std::string::npos);
  EXPECT_TRUE(all_passed(good));
  EXPECT_FALSE(all_passed(sample()));
}

TEST(Json, CarriesEveryField) {
  const auto json = results_json(sample());
  EXPECT_EQ(json["passed"], false);
  ASSERT_EQ(json["gates"].size(), 2u);
  EXPECT_EQ(json["gates"][1]["gate"], "arithmetic");
  EXPECT_EQ(json["gates"][1]["measured"], "44/50 (88.0%)");
  EXPECT_EQ(json["gates"][1]["threshold"], ">= 45/50 (90%)");
  EXPECT_EQ(json["gates"][1]["passed"], false);
  EXPECT_EQ(json["gates"][1]["details"].size(), 3u);
}

TEST(Fractions, ThresholdCountsAndComparisons) {
  EXPECT_EQ(count_text(47, 50), "47/50 (94.0%)");
  EXPECT_EQ(fraction_threshold_text(0.9, 50), ">= 45/50 (90%)");
  EXPECT_EQ(fraction_threshold_text(1.0, 10), ">= 10/10 (100%)");
  EXPECT_EQ(fraction_threshold_text(0.9, 54), ">= 49/54 (90%)");
  EXPECT_TRUE(meets_fraction(45, 50, 0.9));
  EXPECT_FALSE(meets_fraction(44, 50, 0.9));
  EXPECT_TRUE(meets_fraction(10, 10, 1.0));
  EXPECT_FALSE(meets_fraction(9, 10, 1.0));
  EXPECT_FALSE(meets_fraction(0, 0, 0.0));  // nothing measured never passes
}

}  // namespace
}  // namespace minimax::gates
