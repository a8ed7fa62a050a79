// --weight-pages: huge by default, mapped when asked, anything else an error naming the flag and
// both choices.
#include "cli/weight_pages_flag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"

namespace minimax::cli {
namespace {

bool parsed(std::vector<std::string> argv) {
  CLI::App app;
  bool huge = false;
  add_weight_pages_flag(&app, huge);
  std::reverse(argv.begin(), argv.end());  // CLI11 takes a reversed vector
  app.parse(argv);
  return huge;
}

TEST(WeightPagesFlag, HugeUnlessMapped) {
  EXPECT_TRUE(parsed({}));
  EXPECT_TRUE(parsed({"--weight-pages", "huge"}));
  EXPECT_FALSE(parsed({"--weight-pages", "mapped"}));
}

TEST(WeightPagesFlag, OtherValuesNameTheFlagAndTheChoices) {
  try {
    parse_weight_pages("2M");
    FAIL() << "accepted 2M";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--weight-pages"), std::string::npos) << what;
    EXPECT_NE(what.find("'2M'"), std::string::npos) << what;
    EXPECT_NE(what.find("huge"), std::string::npos) << what;
    EXPECT_NE(what.find("mapped"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace minimax::cli
