// --weight-pages huge|mapped, shared by the commands that load a model (generate, chat, bench,
// serve, perplexity): whether the weights read in at load move into transparent huge pages
// (ModelOptions::huge_page_weights, base/huge_pages.h) or stay in the checkpoint mapping's pages.
// `huge` (the default) asks the kernel and takes what it gives: where transparent huge pages are
// off (/sys/kernel/mm/transparent_hugepage/enabled [never]) the weights stay mapped either way.
// `mapped` keeps the page cache shared between processes that load the same checkpoint.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace minimax::cli {

// "huge" -> true, "mapped" -> false; anything else is an Error naming the flag and both values.
bool parse_weight_pages(const std::string& value);

// Adds --weight-pages to `cmd`, parsed into `huge` (true unless given `mapped`).
CLI::Option* add_weight_pages_flag(CLI::App* cmd, bool& huge);

}  // namespace minimax::cli
