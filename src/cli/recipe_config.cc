#include "cli/recipe_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/error.h"

namespace minimax::cli {
namespace {

// A key spelled with underscores where the flag has dashes gets a hint, not a silent match: one
// spelling for each flag keeps recipes greppable against `--help`.
std::string hint_for(const std::string& key, const CLI::App& command) {
  std::string dashed = key;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  if (dashed != key && command.get_option_no_throw("--" + dashed) != nullptr)
    return fmt::format(" (did you mean '{}'?)", dashed);
  return " (keys are the names of `" + command.get_name() + "` flags, without the dashes)";
}

// A YAML value as JSON: plain scalars that read as booleans, null or numbers become those, quoted
// ones stay strings.
nlohmann::json json_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& entry : node) object[entry.first.as<std::string>()] = json_of(entry.second);
      return object;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const YAML::Node& item : node) array.push_back(json_of(item));
      return array;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      if (text == "null" || text == "~" || text.empty()) return nullptr;
      int64_t integer = 0;
      const char* end = text.data() + text.size();
      if (auto r = std::from_chars(text.data(), end, integer); r.ec == std::errc() && r.ptr == end)
        return integer;
      char* parsed = nullptr;
      const double number = std::strtod(text.c_str(), &parsed);
      if (parsed == text.c_str() + text.size()) return number;
      return text;
    }
    default:
      return nullptr;
  }
}

// `text_flag`: the flag takes text, so a map may be written in YAML for a flag whose value is JSON
// (`speculative-config:` with its keys below it, as vLLM's --config reads a dict); it is handed
// to the flag as the JSON text the command line would give.
std::vector<std::string> inputs_of(const YAML::Node& value, const std::string& key,
                                   const std::string& file, bool text_flag) {
  switch (value.Type()) {
    case YAML::NodeType::Scalar:
      return {value.Scalar()};
    case YAML::NodeType::Sequence: {
      std::vector<std::string> inputs;
      for (const YAML::Node& item : value) {
        if (!item.IsScalar())
          fail("recipe '{}': key '{}': list items must be plain values", file, key);
        inputs.push_back(item.Scalar());
      }
      if (inputs.empty()) fail("recipe '{}': key '{}' is an empty list", file, key);
      return inputs;
    }
    case YAML::NodeType::Map:
      if (text_flag) return {json_of(value).dump()};
      fail("recipe '{}': key '{}' is a map; a recipe's values are flag values", file, key);
    default:
      fail("recipe '{}': key '{}' has no value", file, key);
  }
}

// Gives `command` the recipe's values for the flags its command line left unset, as CLI11 would
// have parsed them there. (CLI11 2.1 reads config files for the top-level app only, so its own
// config hook cannot serve a subcommand.)
void apply_recipe(const std::string& file, CLI::App& command) {
  std::ifstream in(file);
  if (!in) fail("--config: cannot read recipe '{}'", file);
  std::stringstream text;
  text << in.rdbuf();
  for (const RecipeItem& item : read_recipe(text.str(), file, command)) {
    CLI::Option* option = command.get_option("--" + item.key);
    if (option->count() > 0) continue;  // given on the command line: that wins
    try {
      if (option->get_expected_min() == 0)  // a flag: "true", "false", "1", ...
        option->add_result(option->get_flag_value(item.key, item.inputs.front()));
      else
        option->add_result(item.inputs);
      option->run_callback();
    } catch (const CLI::Error& e) {
      fail("recipe '{}' line {}: key '{}': {}", file, item.line, item.key, e.what());
    }
  }
}

}  // namespace

std::vector<RecipeItem> read_recipe(const std::string& text, const std::string& file,
                                    const CLI::App& command) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("recipe '{}': not valid YAML: {}", file, e.what());
  }
  if (root.IsNull()) return {};  // an empty file (or only comments) sets nothing
  if (!root.IsMap()) fail("recipe '{}': the top level must be a map of flag names to values", file);
  std::vector<RecipeItem> items;
  std::set<std::string> seen;
  for (const auto& entry : root) {
    if (!entry.first.IsScalar()) fail("recipe '{}': every key must be a flag name", file);
    const std::string key = entry.first.Scalar();
    const int line = entry.first.Mark().line + 1;
    if (!seen.insert(key).second)
      fail("recipe '{}' line {}: key '{}' is repeated", file, line, key);
    if (key == "config" || key == "help")
      fail("recipe '{}' line {}: key '{}' cannot be set from a recipe", file, line, key);
    const CLI::Option* option =
        key.empty() || key[0] == '-' ? nullptr : command.get_option_no_throw("--" + key);
    if (option == nullptr)
      fail("recipe '{}' line {}: unknown key '{}'{}", file, line, key, hint_for(key, command));
    RecipeItem item{key, inputs_of(entry.second, key, file, option->get_type_name() == "TEXT"),
                    line};
    if (item.inputs.size() > 1 && option->get_expected_max() <= 1)
      fail("recipe '{}' line {}: key '{}' takes one value, got a list of {}", file, line, key,
           item.inputs.size());
    items.push_back(std::move(item));
  }
  return items;
}

std::string recipe_of(const CLI::App& command, const std::vector<std::string>& skip) {
  std::string out;
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_single_name();
    // A positional (the model given as MODEL) was handed to its flag, which is listed instead.
    if (option->count() == 0 || !option->nonpositional() || name == "help" || name == "config" ||
        std::find(skip.begin(), skip.end(), name) != skip.end())
      continue;
    const auto& values = option->results();
    if (option->get_expected_max() == 0) {  // a flag given once or more
      out += fmt::format("{}: true\n", name);
    } else if (values.size() == 1) {
      YAML::Emitter value;  // quotes what YAML would otherwise read as another type or a map
      value << values.front();
      out += fmt::format("{}: {}\n", name, value.c_str());
    } else {
      YAML::Emitter list;
      list << YAML::Flow << values;
      out += fmt::format("{}: {}\n", name, list.c_str());
    }
  }
  return out;
}

void add_recipe_config(CLI::App* command) {
  command->add_option_function<std::string>(
      "--config", [command](const std::string& file) { apply_recipe(file, *command); },
      "YAML recipe whose keys are this command's flags (e.g. recipes/*.yaml); flags given here "
      "win over it");
}

}  // namespace minimax::cli
