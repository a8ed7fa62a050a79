// The progress bar's terminal line (base/progress.h progress_line): it fits the terminal, so that
// a redraw overwrites the line instead of wrapping into a new one (issue 39: 94 columns in an
// 80-column terminal printed a new line per update).
#include "base/progress.h"

#include <gtest/gtest.h>

#include <string>

namespace minimax {
namespace {

const std::string kText = "loading  42.0% 1.50 GiB / 3.57 GiB at 812.00 MiB/s, ETA 3 s";

TEST(ProgressLine, AWideTerminalGetsTheFullBar) {
  const std::string line = progress_line(0.5, kText, 200);
  EXPECT_EQ(line, "[" + std::string(15, '#') + std::string(15, '.') + "] " + kText);
}

TEST(ProgressLine, NeverWiderThanTheTerminalLessOne) {
  for (int columns : {20, 40, 60, 80, 94, 100})
    for (double frac : {0.0, 0.37, 1.0, 1.5}) {
      const std::string line = progress_line(frac, kText, columns);
      EXPECT_LE(static_cast<int>(line.size()), columns - 1) << columns;
      EXPECT_EQ(line.front(), '[');
    }
  // 80 columns: the bar shrinks before the text is cut.
  const std::string line = progress_line(1.0, kText, 80);
  EXPECT_NE(line.find(kText), std::string::npos) << line;
  EXPECT_EQ(line.rfind("[" + std::string(17, '#') + "] ", 0), 0u) << line;
}

TEST(ProgressLine, UnknownWidthMeansEighty) {
  EXPECT_EQ(progress_line(0.25, kText, 0), progress_line(0.25, kText, 80));
}

}  // namespace
}  // namespace minimax
