// The list of subcommands, in the order `minimax --help` shows them.
#include "cli/commands.h"

#include "cli/log_flags.h"

namespace minimax::cli {

void register_bench(CLI::App& app);
void register_chat(CLI::App& app);
void register_convert(CLI::App& app);
void register_gates(CLI::App& app);
void register_generate(CLI::App& app);
void register_inspect(CLI::App& app);
void register_logits(CLI::App& app);
void register_make_tiny(CLI::App& app);
void register_parse(CLI::App& app);
void register_perplexity(CLI::App& app);
void register_quantize(CLI::App& app);
void register_serve(CLI::App& app);
void register_tokenizer(CLI::App& app);
void register_validate(CLI::App& app);

void register_all(CLI::App& app) {
  register_bench(app);
  register_chat(app);
  register_convert(app);
  register_gates(app);
  register_generate(app);
  register_inspect(app);
  register_logits(app);
  register_make_tiny(app);
  register_parse(app);
  register_perplexity(app);
  register_quantize(app);
  register_serve(app);
  register_tokenizer(app);
  register_validate(app);
  // Every command logs (loading, progress notes, warnings): each takes the same two flags.
  for (CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; }))
    add_log_flags(command);
}

}  // namespace minimax::cli
