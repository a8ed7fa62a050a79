// The progress bar's terminal line (base/progress.h progress_line): it fits the terminal, so that
// a redraw overwrites the line instead of wrapping into a new one (issue 39: 94 columns in an
// 80-column terminal printed a new line per update); and the steps of a multi-bar command.
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

// make-tiny --format mxfp4 shows two bars, the BF16 checkpoint's and the quantizer's (issue 39:
// with no "step 1/2" the second read as a restart).
TEST(ProgressStep, NumbersTheBarsStartedWhileItLives) {
  EXPECT_EQ(progress_label("make-tiny"), "make-tiny");
  {
    const ProgressStep step(1, 2);
    EXPECT_EQ(progress_label("make-tiny"), "step 1/2 make-tiny");
  }
  {
    const ProgressStep step(2, 2);
    EXPECT_EQ(progress_label("quantize"), "step 2/2 quantize");
  }
  EXPECT_EQ(progress_label("quantize"), "quantize");
}

}  // namespace
}  // namespace minimax
