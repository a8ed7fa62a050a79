// cli/usage_errors.h: typos in commands and flags named with the nearest known name, found before
// CLI11 reports missing required flags.
#include "cli/usage_errors.h"

#include <gtest/gtest.h>

namespace minimax::cli {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("serve", "serve"), 0u);
  EXPECT_EQ(edit_distance("serv", "serve"), 1u);
  EXPECT_EQ(edit_distance("--modle", "--model"), 2u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(NearestName, PicksTheClosestLikelyTypo) {
  const std::vector<std::string> names = {"serve", "chat", "generate", "bench"};
  EXPECT_EQ(nearest_name("serv", names), "serve");
  EXPECT_EQ(nearest_name("sever", names), "serve");
  EXPECT_EQ(nearest_name("generat", names), "generate");
  EXPECT_EQ(nearest_name("xyzzy", names), "");
}

// A small command tree shaped like `minimax`: serve with a required --model-like flag, and a
// command with subcommands of its own.
struct Minimax {
  CLI::App app;
  std::string model, text;
  int port = 0;
  Minimax() {
    app.set_version_flag("--version", "x");
    CLI::App* serve = app.add_subcommand("serve");
    serve->add_option("--model", model)->required();
    serve->add_option("--port", port);
    serve->add_option("MODEL", model);
    CLI::App* tokenizer = app.add_subcommand("tokenizer");
    tokenizer->add_subcommand("encode")->add_option("--text", text);
  }
  std::string unknown(const std::vector<std::string>& args) {
    return unknown_name_in(app, args).value_or("");
  }
};

TEST(UnknownName, CommandWithNearestMatch) {
  Minimax m;
  EXPECT_EQ(m.unknown({"serv"}), "unknown command 'serv'; did you mean 'serve'?");
  EXPECT_EQ(m.unknown({"frobnicate"}), "unknown command 'frobnicate'");
}

TEST(UnknownName, FlagWithNearestMatchBeforeRequiredFlags) {
  Minimax m;
  EXPECT_EQ(m.unknown({"serve", "--modle", "dir"}),
            "unknown flag '--modle' for 'serve'; did you mean '--model'?");
  EXPECT_EQ(m.unknown({"serve", "--prot=80"}),
            "unknown flag '--prot' for 'serve'; did you mean '--port'?");
}

TEST(UnknownName, TopLevelOption) {
  Minimax m;
  EXPECT_EQ(m.unknown({"--verison"}), "unknown option '--verison'; did you mean '--version'?");
}

TEST(UnknownName, NestedCommands) {
  Minimax m;
  EXPECT_EQ(m.unknown({"tokenizer", "encod"}),
            "unknown command 'encod' for 'tokenizer'; did you mean 'encode'?");
  EXPECT_EQ(m.unknown({"tokenizer", "encode", "--txt", "a"}),
            "unknown flag '--txt' for 'encode'; did you mean '--text'?");
}

TEST(UnknownName, KnownNamesValuesAndPositionalsPass) {
  Minimax m;
  EXPECT_FALSE(unknown_name_in(m.app, {"serve", "dir", "--port", "-1", "--model=x", "--help"}));
  EXPECT_FALSE(unknown_name_in(m.app, {"serve", "--", "--anything"}));
  EXPECT_FALSE(unknown_name_in(m.app, {"--version"}));
  // Values that start with dashes but are no flag name to CLI11 either.
  EXPECT_FALSE(unknown_name_in(m.app, {"tokenizer", "encode", "--text", "--help me"}));
  EXPECT_FALSE(unknown_name_in(m.app, {"serve", "--port", "--", "x"}));
}

}  // namespace
}  // namespace minimax::cli
