// cli/model_flag.h: the model as --model DIR or as the first argument, and the served name.
#include "cli/model_flag.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "cli/recipe_config.h"

namespace minimax::cli {
namespace {

struct Command {
  CLI::App app;
  std::string model;
  Command() { add_model_flag(&app, model, "Checkpoint directory"); }
};

TEST(ModelFlag, AsAFlag) {
  Command c;
  c.app.parse("--model /m/dir");
  EXPECT_EQ(c.model, "/m/dir");
}

TEST(ModelFlag, AsTheFirstArgument) {
  Command c;
  c.app.parse("/m/dir");
  EXPECT_EQ(c.model, "/m/dir");
}

TEST(ModelFlag, BothTheSameIsFine) {
  Command c;
  c.app.parse("/m/dir --model /m/dir");
  EXPECT_EQ(c.model, "/m/dir");
}

TEST(ModelFlag, BothDifferentIsAnErrorNamingBoth) {
  Command c;
  try {
    c.app.parse("/m/a --model /m/b");
    FAIL() << "two different models accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "the model is given twice, as '/m/a' and as --model '/m/b'; give it once");
  }
}

TEST(ModelFlag, NeitherLeavesItEmptyForTheCommandToReport) {
  Command c;
  c.app.parse("");
  EXPECT_EQ(c.model, "");
}

TEST(ModelFlag, RecipeOfListsThePositionalAsModel) {
  Command c;
  c.app.parse("/m/dir");
  EXPECT_EQ(recipe_of(c.app, {}), "model: /m/dir\n");
}

TEST(ModelDirectoryName, IsTheLastPartOfThePath) {
  EXPECT_EQ(model_directory_name("/models/MiniMax-M2.5"), "MiniMax-M2.5");
  EXPECT_EQ(model_directory_name("/models/MiniMax-M2.5/"), "MiniMax-M2.5");
  EXPECT_EQ(model_directory_name("models/minimax-m3-tiny"), "minimax-m3-tiny");
  EXPECT_EQ(model_directory_name("MiniMax-M3"), "MiniMax-M3");
  EXPECT_FALSE(model_directory_name(".").empty());
  EXPECT_NE(model_directory_name("."), ".");
}

}  // namespace
}  // namespace minimax::cli
