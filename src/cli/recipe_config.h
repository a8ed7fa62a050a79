// `serve --config RECIPE.yaml`: a deployment recipe, as vLLM's `--config`. Each top-level YAML key
// is the name of one of the subcommand's flags without its dashes (`tensor-parallel-size: 8`) and
// means exactly what the flag means, because it is handed to the same CLI11 option. A flag given
// on the command line wins over the recipe. A map is handed to a text flag as JSON (a JSON-valued
// flag such as speculative-config written as YAML); unknown keys, maps for other flags and a
// `config` key are errors that name the key and the file.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace minimax::cli {

// Adds `--config FILE` to `command`, read as a YAML recipe of its own flags. Call it after every
// other flag is added: the recipe is applied from this option's callback, which CLI11 runs after
// the callbacks of the flags declared before it and before it checks required flags.
void add_recipe_config(CLI::App* command);

// One `key: value` of a recipe, checked against `command`'s flags.
struct RecipeItem {
  std::string key;
  std::vector<std::string> inputs;  // a scalar is one input, a list several
  int line = 0;
};

// The items of a recipe text (exposed for the tests); `file` names the recipe in errors.
std::vector<RecipeItem> read_recipe(const std::string& text, const std::string& file,
                                    const CLI::App& command);

// The flags `command` was given (on its command line or by its recipe) as a recipe, one
// `key: value` line each, leaving out `skip` (e.g. the flag that asked for this).
std::string recipe_of(const CLI::App& command, const std::vector<std::string>& skip);

}  // namespace minimax::cli
