#include "cli/model_flag.h"

#include <filesystem>

#include "base/error.h"

namespace minimax::cli {

CLI::Option* add_model_flag(CLI::App* cmd, std::string& model, const std::string& help) {
  CLI::Option* flag =
      cmd->add_option("--model", model, help + " (or give it as the first argument)");
  // Declared after --model, so CLI11 runs this callback after --model's and before --config's
  // (a recipe's `model` then loses to the positional, as to any flag on the command line).
  cmd->add_option_function<std::string>(
         "MODEL",
         [flag, &model](const std::string& positional) {
           if (flag->count() > 0) {
             if (model != positional)
               fail("the model is given twice, as '{}' and as --model '{}'; give it once",
                    positional, model);
             return;
           }
           flag->add_result(positional);
           model = positional;
         },
         help + " (same as --model)")
      ->type_name("DIR");
  return flag;
}

std::string model_directory_name(const std::string& path) {
  std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "dir/" → "dir"
  std::string name = normal.filename().string();
  if (name.empty() || name == "." || name == "..")  // "." or "/": the directory's real name
    name = std::filesystem::weakly_canonical(std::filesystem::absolute(path)).filename().string();
  return name.empty() ? path : name;
}

}  // namespace minimax::cli
