// `minimax logits --model DIR (--tokens 1,2,3 | --prompt TEXT) --output FILE.npy
// [--all-positions] [--taps 2,31,59 --taps-output TAPS.npy]`: float32 logits [positions, vocab]
// for parity checks against other implementations (the last position only, unless
// --all-positions); with --taps, also the hidden states entering those layers at every position,
// [positions, layers × hidden] (what an EAGLE-3 head reads; tools/train_eagle3.py trains on them).
#include <cstdio>
#include <sstream>

#include "base/error.h"
#include "cli/activations_flag.h"
#include "cli/backend_flag.h"
#include "cli/commands.h"
#include "cli/kv_cache_flag.h"
#include "cli/model_flag.h"
#include "cli/model_path_check.h"
#include "cli/parallel_flags.h"
#include "cli/threads_flag.h"
#include "model/model.h"
#include "model/npy.h"
#include "text/bpe_tokenizer.h"

namespace minimax::cli {
namespace {

std::vector<int32_t> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long value = -1;
    try {
      value = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < 0 || value > INT32_MAX)
      fail("--tokens: '{}' is not a token id (expected comma-separated non-negative integers)",
           item);
    ids.push_back(static_cast<int32_t>(value));
  }
  if (ids.empty()) fail("--tokens: no token ids given");
  return ids;
}

}  // namespace

void register_logits(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Write the model's float32 logits as a .npy file");
  struct Args {
    std::string model, tokens, prompt, output, backend = "cpu", moe = "fast", taps, taps_output;
    bool cpu_moe = false;
    bool all_positions = false, emulate_act_quant = false, dense_attention = false, quiet = false;
    size_t threads = 0;
    ParallelRequest parallel;
    std::string kv_cache_dtype = "auto", activations;
    bool batch_invariant = false;
  };
  auto args = std::make_shared<Args>();
  add_model_flag(cmd, args->model, "Checkpoint directory");
  auto* tokens = cmd->add_option("--tokens", args->tokens, "Comma-separated token ids");
  auto* prompt = cmd->add_option("--prompt", args->prompt, "Text, encoded with tokenizer.json");
  tokens->excludes(prompt);
  cmd->add_option("--output", args->output, "Output .npy file")->required();
  cmd->add_flag("--all-positions", args->all_positions, "Logits of every position, not the last");
  auto* taps = cmd->add_option("--taps", args->taps,
                               "Comma-separated layers whose entering hidden states to write "
                               "(EAGLE-3 taps)");
  cmd->add_option("--taps-output", args->taps_output, "Output .npy for --taps")->needs(taps);
  taps->needs(cmd->get_option("--taps-output"));
  add_backend_flags(cmd, args->backend, args->cpu_moe);
  cmd->add_option("--moe", args->moe, "MoE path: fast, or dequant (experts decoded to bf16)")
      ->check(CLI::IsMember({"fast", "dequant"}));
  cmd->add_flag("--emulate-act-quant", args->emulate_act_quant,
                "Emulate the checkpoint's dynamic FP8 activation quantization");
  cmd->add_flag("--dense-attention", args->dense_attention,
                "Attend densely on MSA layers (diagnostic)");
  add_threads_flag(cmd, args->threads, "Worker threads");
  add_parallel_flags(cmd, args->parallel);
  add_kv_cache_dtype_flag(cmd, args->kv_cache_dtype);
  add_activations_flag(cmd, args->activations);
  add_batch_invariant_flag(cmd, args->batch_invariant);
  cmd->add_flag("--quiet", args->quiet, "No load progress on stderr");
  cmd->callback([args] {
    check_model_path(args->model);
    if (args->tokens.empty() == args->prompt.empty()) fail("logits: give --tokens or --prompt");
    std::vector<int32_t> ids =
        !args->tokens.empty()
            ? parse_token_list(args->tokens)
            : BpeTokenizer::from_file(args->model + "/tokenizer.json").encode(args->prompt);
    if (ids.empty()) fail("--prompt: the text encodes to no tokens");
    ModelOptions options;
    options.cpu = cpu_kernel_config(args->activations, args->batch_invariant);
    options.backend = resolve_backend(args->backend, args->cpu_moe);
    options.cpu_moe = args->cpu_moe;
    options.moe_path = parse_moe_path(args->moe, "--moe");
    options.emulate_activation_quant = args->emulate_act_quant;
    options.dense_attention = args->dense_attention;
    options.threads = args->threads;
    options.parallel = args->parallel;
    options.show_load_progress = !args->quiet;
    auto model = Model::load(args->model, options, ranks());
    if (follow_rank0(*model)) return;  // the output is rank 0's
    std::vector<int> tap_layers;
    if (!args->taps.empty())
      for (int32_t layer : parse_token_list(args->taps)) tap_layers.push_back(layer);
    model->set_hidden_taps(tap_layers);
    KvCache cache =
        model->new_cache(static_cast<int64_t>(ids.size()), kv_cache_dtype(args->kv_cache_dtype));
    std::vector<int32_t> positions(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) positions[i] = static_cast<int32_t>(i);
    const LogitsFor which = args->all_positions ? LogitsFor::kAllTokens : LogitsFor::kLastToken;
    std::vector<float> logits = model->forward(ids, positions, cache, which);
    const int64_t vocab = model->weights().vocab_size;
    const int64_t rows = static_cast<int64_t>(logits.size()) / vocab;
    write_npy_f32(args->output, logits, {rows, vocab});
    std::printf("wrote logits [%lld, %lld] for %zu tokens to %s\n", static_cast<long long>(rows),
                static_cast<long long>(vocab), ids.size(), args->output.c_str());
    if (!tap_layers.empty()) {
      const auto width = static_cast<int64_t>(tap_layers.size()) * model->config().hidden_size;
      write_npy_f32(args->taps_output, model->hidden_taps(),
                    {static_cast<int64_t>(ids.size()), width});
    }
  });
}

}  // namespace minimax::cli
