// `serve --config RECIPE.yaml` (cli/recipe_config.h): recipe keys are the command's flags, the
// command line wins, and every mistake names the key and the file.
#include "cli/recipe_config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"

namespace minimax::cli {
namespace {

// A command shaped like `serve`: a required string, numbers, a size string, a flag.
struct Fixture {
  CLI::App app{"test"};
  CLI::App* serve = app.add_subcommand("serve");
  std::string model, kv_memory = "1GiB";
  int port = 8000, tensor_parallel = 1;
  bool expert_parallel = false;
  std::vector<std::string> stops;

  ~Fixture() { remove_file(); }
  void remove_file() {
    std::error_code ignored;  // a leftover is only litter
    if (!file.empty()) std::filesystem::remove(file, ignored);
  }

  Fixture() {
    serve->add_option("--model", model)->required();
    serve->add_option("--port", port);
    serve->add_option("--kv-cache-memory", kv_memory);
    serve->add_option("--tensor-parallel-size", tensor_parallel);
    serve->add_flag("--enable-expert-parallel", expert_parallel);
    serve->add_option("--stop", stops);
    add_recipe_config(serve);
  }

  // Parses `serve --config FILE ARGS...`, with the recipe text written to FILE first.
  void parse(const std::string& recipe, std::vector<std::string> args = {}) {
    // One file per test and fixture: ctest runs the tests of this binary as parallel processes.
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    remove_file();
    file = (std::filesystem::path(::testing::TempDir()) /
            fmt::format("recipe_test_{}_{}_{}.yaml", test->name(), ::getpid(), ++parses))
               .string();
    std::ofstream(file) << recipe;
    std::vector<std::string> argv = {"serve", "--config", file};
    argv.insert(argv.end(), args.begin(), args.end());
    std::reverse(argv.begin(), argv.end());  // CLI11 takes the arguments last-first
    app.parse(argv);
  }
  std::string file;
  int parses = 0;
};

std::string recipe_error_of(const std::string& recipe) {
  Fixture f;
  try {
    f.parse(recipe);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RecipeConfig, KeysSetTheFlagsOfTheSameName) {
  Fixture f;
  f.parse(
      "# a comment\n"
      "model: /models/m2\n"
      "port: 9001\n"
      "kv-cache-memory: 4GiB\n"
      "tensor-parallel-size: 2\n"
      "enable-expert-parallel: true\n"
      "stop: [\"</s>\", \"END\"]\n");
  EXPECT_EQ(f.model, "/models/m2");
  EXPECT_EQ(f.port, 9001);
  EXPECT_EQ(f.kv_memory, "4GiB");
  EXPECT_EQ(f.tensor_parallel, 2);
  EXPECT_TRUE(f.expert_parallel);
  EXPECT_EQ(f.stops, (std::vector<std::string>{"</s>", "END"}));
}

TEST(RecipeConfig, TheCommandLineWinsOverTheRecipe) {
  Fixture f;
  f.parse("model: /models/a\nport: 9001\n", {"--port", "0"});
  EXPECT_EQ(f.port, 0);
  EXPECT_EQ(f.model, "/models/a");
}

TEST(RecipeConfig, AFalseFlagStaysOff) {
  Fixture f;
  f.parse("model: m\nenable-expert-parallel: false\n");
  EXPECT_FALSE(f.expert_parallel);
}

TEST(RecipeConfig, UnknownKeysNameTheKeyTheLineAndTheFile) {
  const std::string error = recipe_error_of("model: m\n\nmax-modle-len: 4096\n");
  EXPECT_NE(error.find("unknown key 'max-modle-len'"), std::string::npos) << error;
  EXPECT_NE(error.find("recipe_test_UnknownKeys"), std::string::npos) << error;
  EXPECT_NE(error.find("line 3"), std::string::npos) << error;
}

TEST(RecipeConfig, UnderscoreSpellingsGetTheFlagNameAsAHint) {
  const std::string error = recipe_error_of("model: m\nkv_cache_memory: 2GiB\n");
  EXPECT_NE(error.find("did you mean 'kv-cache-memory'"), std::string::npos) << error;
}

TEST(RecipeConfig, AMapForATextFlagIsHandedOverAsJson) {
  // `speculative-config` written as YAML, as vLLM's --config takes a dict: the flag gets the JSON
  // text the command line would give (numbers and booleans typed, quoted values strings).
  CLI::App app{"test"};
  CLI::App* serve = app.add_subcommand("serve");
  std::string model, spec;
  serve->add_option("--model", model);
  serve->add_option("--speculative-config", spec);
  const std::vector<RecipeItem> items = read_recipe(
      "model: m\n"
      "speculative-config:\n"
      "  method: ngram\n"
      "  num_speculative_tokens: 8\n"
      "  suffix_decoding_min_token_prob: 0.25\n"
      "  adaptive: false\n"
      "  model: \"007\"\n",
      "r.yaml", *serve);
  ASSERT_EQ(items.size(), 2u);
  ASSERT_EQ(items[1].inputs.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(items[1].inputs[0]),
            nlohmann::json::parse(R"({"method": "ngram", "num_speculative_tokens": 8,
                                      "suffix_decoding_min_token_prob": 0.25, "adaptive": false,
                                      "model": "007"})"));
}

TEST(RecipeConfig, MistakesInShapeAreErrorsNamingTheKey) {
  EXPECT_NE(recipe_error_of("model: m\nport:\n  http: 80\n").find("key 'port' is a map"),
            std::string::npos);
  EXPECT_NE(recipe_error_of("model: m\nport: [1, 2]\n").find("key 'port' takes one value"),
            std::string::npos);
  EXPECT_NE(recipe_error_of("model: m\nport: 1\nport: 2\n").find("key 'port' is repeated"),
            std::string::npos);
  EXPECT_NE(recipe_error_of("model: m\nport:\n").find("key 'port' has no value"),
            std::string::npos);
  EXPECT_NE(recipe_error_of("config: other.yaml\n").find("key 'config' cannot be set"),
            std::string::npos);
  EXPECT_NE(recipe_error_of("- model\n- port\n").find("top level must be a map"),
            std::string::npos);
  EXPECT_NE(recipe_error_of("model: [unclosed\n").find("not valid YAML"), std::string::npos);
  EXPECT_NE(recipe_error_of("--port: 1\n").find("unknown key '--port'"), std::string::npos);
}

TEST(RecipeConfig, BadValuesFailAsTheSameFlagWouldOnTheCommandLineNamingTheKey) {
  const std::string error = recipe_error_of("model: m\nport: eighty\n");
  EXPECT_NE(error.find("line 2: key 'port': "), std::string::npos) << error;
  EXPECT_NE(error.find("eighty"), std::string::npos) << error;
}

TEST(RecipeConfig, AMissingFileIsAnErrorNamingIt) {
  Fixture f;
  try {
    f.app.parse(std::vector<std::string>{"/no/such/recipe.yaml", "--config", "serve"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'/no/such/recipe.yaml'"), std::string::npos);
  }
}

TEST(RecipeConfig, TheRequiredModelMayComeFromTheRecipe) {
  Fixture f;
  EXPECT_NO_THROW(f.parse("model: /m\n"));
  Fixture g;
  EXPECT_THROW(g.parse("port: 1\n"), CLI::RequiredError);
}

TEST(RecipeConfig, WrittenRecipesReadBackToTheSameFlags) {
  Fixture f;
  f.parse("model: 'a: b'\nport: 7\nenable-expert-parallel: true\nstop: ['x', 'y z']\n",
          {"--kv-cache-memory", "3GiB"});
  const std::string written = recipe_of(*f.serve, {});
  Fixture g;
  g.parse(written);
  EXPECT_EQ(g.model, "a: b");
  EXPECT_EQ(g.port, 7);
  EXPECT_EQ(g.kv_memory, "3GiB");
  EXPECT_TRUE(g.expert_parallel);
  EXPECT_EQ(g.stops, (std::vector<std::string>{"x", "y z"}));
}

}  // namespace
}  // namespace minimax::cli
