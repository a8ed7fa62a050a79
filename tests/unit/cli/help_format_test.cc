// --help wrapped to the terminal and grouped (issue 39: 759-character lines, no groups).
#include "cli/help_format.h"

#include <gtest/gtest.h>

#include <sstream>

namespace minimax::cli {
namespace {

size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  size_t widest = 0;
  for (std::string line; std::getline(in, line);) widest = std::max(widest, line.size());
  return widest;
}

TEST(HelpFormat, WrapWordsBreaksAtSpacesWithinTheWidth) {
  EXPECT_EQ(wrap_words("one two three four", 9),
            (std::vector<std::string>{"one two", "three", "four"}));
  EXPECT_EQ(wrap_words("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
  EXPECT_EQ(wrap_words("", 10), (std::vector<std::string>{""}));
}

TEST(HelpFormat, LongDescriptionsAndNamesFitTheWidthAndFlagsAreGrouped) {
  for (const size_t width : {60, 80, 100}) {
    CLI::App app{"test", "minimax"};
    auto* serve = app.add_subcommand("serve", std::string(200, 'd'));
    serve->footer("stdin: " + std::string(120, 'f') + " and words after it\nstdout: the rest");
    std::string s;
    double u = 0;
    int port = 0;
    serve->add_option("--kv-cache-memory", s,
                      std::string(500, 'x') + " words " + "and many more words to wrap over lines");
    serve->add_option("--memory-utilization,--gpu-memory-utilization", u, "short")
        ->check(CLI::Range(0.01, 1.0));
    serve->add_option("--port", port, "Port");
    format_help_of(app);
    // format_help_of chose the terminal's width; render at `width` here.
    const auto formatter = std::make_shared<WrappingFormatter>(width);
    app.formatter(formatter);
    serve->formatter(formatter);
    const std::string help = serve->help();
    EXPECT_LE(widest_line(help), width) << help;
    EXPECT_LE(widest_line(app.help()), width) << app.help();
    EXPECT_NE(help.find("stdout: the rest"), std::string::npos) << help;  // the footer's lines
    EXPECT_NE(help.find("Server:"), std::string::npos) << help;
    EXPECT_NE(help.find("Memory and KV cache:"), std::string::npos) << help;
  }
}

}  // namespace
}  // namespace minimax::cli
