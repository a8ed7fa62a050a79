#include "cli/help_format.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace minimax::cli {
namespace {

constexpr size_t kMaxWidth = 100, kMinWidth = 60;

// The group of each flag, whatever the command: one name means one thing in every command.
const std::map<std::string, std::string>& flag_groups() {
  static const std::map<std::string, std::string> groups = [] {
    std::map<std::string, std::string> g;
    auto put = [&g](const char* group, std::initializer_list<const char*> flags) {
      for (const char* f : flags) g[f] = group;
    };
    put("Model",
        {"--model", "--served-model-name", "--chat-template", "--trust-remote-code", "--dtype",
         "--backend", "--moe-path", "--activations", "--batch-invariant", "--config", "--dry-run"});
    put("Server", {"--host", "--port", "--api-key", "--http-threads", "--request-timeout",
                   "--shutdown-timeout", "--max-waiting", "--allowed-origins", "--allowed-methods",
                   "--allowed-headers", "--allow-credentials"});
    put("Memory and KV cache", {"--max-model-len", "--kv-cache-memory", "--memory-utilization",
                                "--block-size", "--allow-long-max-model-len", "--kv-cache-dtype",
                                "--no-enable-prefix-caching", "--enable-prefix-caching"});
    put("Scheduling", {"--max-num-seqs", "--max-num-batched-tokens", "--grammar-mask-budget-ms",
                       "--speculative-config"});
    put("Parsers", {"--reasoning-parser", "--tool-call-parser", "--enable-auto-tool-choice"});
    put("Parallel", {"--tensor-parallel-size", "--data-parallel-size", "--enable-expert-parallel",
                     "--collective-timeout", "--threads"});
    put("Sampling", {"--temperature", "--top-p", "--top-k", "--min-p", "--seed", "--max-tokens",
                     "--repetition-penalty", "--presence-penalty", "--frequency-penalty"});
    put("Logging", {"--log-level", "--log-format", "--quiet"});
    return g;
  }();
  return groups;
}

void group_flags(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_group() != "Options") continue;
    for (const std::string& name : opt->get_lnames()) {
      auto it = flag_groups().find("--" + name);
      if (it == flag_groups().end()) continue;
      opt->group(it->second);
      break;
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) group_flags(*sub);
}

void set_formatter(CLI::App& app, const std::shared_ptr<WrappingFormatter>& formatter) {
  app.formatter(formatter);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    set_formatter(*sub, formatter);
}

}  // namespace

std::vector<std::string> wrap_words(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '\n') {
      lines.push_back(line);
      line.clear();
      ++i;
      continue;
    }
    if (text[i] == ' ') {
      ++i;
      continue;
    }
    size_t end = text.find_first_of(" \n", i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(i, end - i);
    i = end;
    while (word.size() > width) {  // a word wider than the column: cut it
      if (!line.empty()) lines.push_back(std::exchange(line, {}));
      lines.emplace_back(word.substr(0, width));
      word.remove_prefix(width);
    }
    if (!line.empty() && line.size() + 1 + word.size() > width)
      lines.push_back(std::exchange(line, {}));
    line += (line.empty() ? "" : " ") + std::string(word);
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

size_t help_width() {
  size_t columns = 0;
  winsize size{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    columns = size.ws_col;
  } else if (const char* env = std::getenv("COLUMNS"); env != nullptr) {
    columns = static_cast<size_t>(std::max(0L, std::strtol(env, nullptr, 10)));
  }
  if (columns == 0) columns = kMaxWidth;
  return std::clamp(columns, kMinWidth, kMaxWidth);
}

std::string WrappingFormatter::entry(const std::string& name,
                                     const std::string& description) const {
  const size_t column = get_column_width();
  std::string out;
  // The name on a line of its own when it reaches the description's column or past the width.
  for (const std::string& part : wrap_words(name, width_ - 2)) out += "  " + part + "\n";
  out.pop_back();
  const size_t last_line = out.size() - out.rfind('\n') - 1;
  if (description.empty()) return out + "\n";
  const std::vector<std::string> lines = wrap_words(description, width_ - column);
  bool first = true;
  if (last_line + 1 > column || out.find('\n') != std::string::npos)
    out += "\n";
  else {
    out += std::string(column - last_line, ' ') + lines.front() + "\n";
    first = false;
  }
  for (size_t i = first ? 0 : 1; i < lines.size(); ++i)
    out += std::string(column, ' ') + lines[i] + "\n";
  return out;
}

std::string WrappingFormatter::make_option(const CLI::Option* opt, bool is_positional) const {
  return entry(make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  return entry(sub->get_display_name(), sub->get_description());
}

std::string WrappingFormatter::make_description(const CLI::App* app) const {
  if (app->get_description().empty()) return "";
  std::string out;
  for (const std::string& line : wrap_words(app->get_description(), width_)) out += line + "\n";
  return out;
}

std::string WrappingFormatter::make_footer(const CLI::App* app) const {
  if (app->get_footer().empty()) return "";
  std::string out;
  for (const std::string& line : wrap_words(app->get_footer(), width_)) out += line + "\n";
  return out;
}

void format_help_of(CLI::App& app) {
  group_flags(app);
  set_formatter(app, std::make_shared<WrappingFormatter>(help_width()));
}

}  // namespace minimax::cli
