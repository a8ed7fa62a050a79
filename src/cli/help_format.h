// `--help` that fits the terminal (issue 39: lines ran to 759 characters, ungrouped): flags in
// groups (Model, Server, Memory and KV cache, Scheduling, Parsers, Parallel, Sampling, Logging),
// descriptions wrapped at the terminal's width, at most 100 columns.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace minimax::cli {

// `text` broken at spaces into lines of at most `width` characters (a longer word is cut).
std::vector<std::string> wrap_words(std::string_view text, size_t width);

// Columns help is wrapped to: the terminal's (stdout, else $COLUMNS), at most 100, at least 60.
size_t help_width();

// CLI11's formatter with wrapped descriptions, `width` columns in all.
class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(size_t width) : width_(width) { column_width(30); }
  std::string make_option(const CLI::Option* opt, bool is_positional) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
  std::string make_description(const CLI::App* app) const override;
  std::string make_footer(const CLI::App* app) const override;  // parse's stdin/stdout formats

 private:
  std::string entry(const std::string& name, const std::string& description) const;
  size_t width_;
};

// Puts every flag of `app` and its subcommands still in CLI11's default group into its group by
// name (one table for every command), and gives them all a WrappingFormatter of help_width().
void format_help_of(CLI::App& app);

}  // namespace minimax::cli
