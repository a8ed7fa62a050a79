// Mistakes in the command line itself, found before CLI11 parses it. CLI11 checks required flags
// before it reports unknown ones, so `minimax serv` said "A subcommand is required" and
// `serve --modle DIR` said "--model is required" (issue 39): the typo was never named. Here an
// unknown command or flag is reported first, with the nearest known name.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace minimax::cli {

// Levenshtein distance (insertions, deletions, substitutions) between two names.
size_t edit_distance(const std::string& a, const std::string& b);

// The name in `names` nearest to `given`, when it is near enough to be a likely typo (a prefix of
// it, or within a third of its length in edits, at least 2); "" otherwise.
std::string nearest_name(const std::string& given, const std::vector<std::string>& names);

// The message for the first unknown subcommand or long flag in `args` (the arguments after the
// program name) against `app`'s commands and each command's flags, e.g. "unknown command 'serv';
// did you mean 'serve'?"; nothing when every name is known. Arguments after "--" and values that do
// not start with "--" are not looked at.
std::optional<std::string> unknown_name_in(const CLI::App& app,
                                           const std::vector<std::string>& args);

}  // namespace minimax::cli
