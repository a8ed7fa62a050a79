#include "cli/usage_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace minimax::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  return names;
}

std::vector<std::string> flag_names(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

const CLI::App* subcommand_named(const CLI::App& command, const std::string& name) {
  for (const CLI::App* sub : command.get_subcommands([](const CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  return nullptr;
}

// "--name" or "--name=value", as CLI11 reads a long flag. Anything else that starts with "--"
// ("--help me", a prompt) is a value to CLI11, and so it is here.
bool looks_like_long_flag(const std::string& arg) {
  if (arg.size() < 3 || arg.rfind("--", 0) != 0) return false;
  if (!std::isalnum(static_cast<unsigned char>(arg[2])) && arg[2] != '_') return false;
  const std::string name = arg.substr(0, arg.find('='));
  return std::none_of(name.begin(), name.end(),
                      [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  const std::string nearest = nearest_name(given, names);
  return nearest.empty() ? "" : fmt::format("; did you mean '{}'?", nearest);
}

}  // namespace

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);  // distances from a's prefix to each prefix of b
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string nearest_name(const std::string& given, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, given.size() / 3) + 1;
  for (const std::string& name : names) {
    // A prefix ("serv" of "serve", "--max-model" of "--max-model-len") counts as one edit.
    const bool prefix = given.size() >= 3 && name.rfind(given, 0) == 0;
    const size_t distance = prefix ? 1 : edit_distance(given, name);
    if (distance < best_distance) {
      best = name;
      best_distance = distance;
    }
  }
  return best;
}

std::optional<std::string> unknown_name_in(const CLI::App& app,
                                           const std::vector<std::string>& args) {
  const CLI::App* command = &app;
  bool top_level = true;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (looks_like_long_flag(arg)) {
      const std::string name = arg.substr(0, arg.find('='));
      if (command->get_option_no_throw(name) != nullptr) continue;
      if (top_level)
        return fmt::format("unknown option '{}'{}", name, did_you_mean(name, flag_names(*command)));
      return fmt::format("unknown flag '{}' for '{}'{}", name, command->get_name(),
                         did_you_mean(name, flag_names(*command)));
    }
    if (arg.empty() || arg[0] == '-') continue;  // a short flag or a negative number
    const std::vector<std::string> commands = command_names(*command);
    if (commands.empty()) continue;  // a value or a positional argument
    if (const CLI::App* sub = subcommand_named(*command, arg)) {
      command = sub;
      top_level = false;
      continue;
    }
    // A word where a command was due: before the first command, or a command's own subcommand
    // (`tokenizer encode`) when that command takes no positional arguments of its own.
    if (top_level ||
        command->get_options([](const CLI::Option* o) { return !o->nonpositional(); }).empty()) {
      const std::string where = top_level ? "" : fmt::format(" for '{}'", command->get_name());
      return fmt::format("unknown command '{}'{}{}", arg, where, did_you_mean(arg, commands));
    }
  }
  return std::nullopt;
}

}  // namespace minimax::cli
