// `minimax make-tiny --hf-config CONFIG.json [--layers N] [--format F] --output DIR`: a random
// checkpoint with a released model's exact width, vocabulary, experts, MSA settings and tensor
// names, cut to N layers, sharded as the releases are (checkpoint/hf_config_checkpoint.h). The
// tokenizer is the tiny trained one: ids past it are never produced by prompts but are valid rows
// of the real-size embedding and lm_head.
#include <cstdio>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/progress.h"
#include "base/thread_pool.h"
#include "checkpoint/eagle3_config.h"
#include "checkpoint/eagle3_random.h"
#include "checkpoint/hf_config_checkpoint.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quantize.h"
#include "cli/make_tiny.h"
#include "cli/threads_flag.h"

namespace minimax::cli {

CLI::Option* add_hf_config_options(CLI::App* cmd, HfConfigRequest& request) {
  auto* config = cmd->add_option("--hf-config", request.config,
                                 "A released config.json: write a random checkpoint of its real "
                                 "width (e.g. models/configs/minimax-m3.config.json)");
  cmd->add_option("--layers", request.layers,
                  "With --hf-config: keep the first N decoder layers (default: all)")
      ->check(CLI::PositiveNumber)
      ->needs(config);
  cmd->add_option("--shard-gb", request.shard_gb,
                  "With --hf-config: tensor data per shard in GB (default 5, as the releases)")
      ->check(CLI::PositiveNumber)
      ->needs(config);
  add_threads_flag(cmd, request.threads, "With --hf-config: generator threads")->needs(config);
  return config;
}

void make_tiny_from_hf_config(const HfConfigRequest& request, const std::string& output,
                              const std::string& format, uint64_t seed, bool force) {
  nlohmann::json config = read_json_file(request.config);
  const ModelConfig full = parse_model_config(config, request.config);
  if (request.layers > 0) config = slice_hf_config(config, request.layers, request.config);
  config = hf_config_for_scheme(config, parse_quant_scheme(format), request.config);
  const ModelConfig model = parse_model_config(config, request.config);

  AtomicDirectory out(output, force);
  ThreadPool pool(request.threads);
  const auto summary = write_random_checkpoint(config, out.path(), seed,
                                               static_cast<uint64_t>(request.shard_gb * 1e9), pool);
  write_tokenizer_files(out.path(), model.arch, 512);
  write_generation_config(out.path());
  out.commit();
  std::printf(
      "wrote %s (%d of %d layers, hidden %d, vocab %d, %d experts) as %s: %zu tensors, "
      "%s in %d shard(s), seed %llu, to %s\n",
      request.config.c_str(), model.num_layers, full.num_layers, model.hidden_size,
      model.vocab_size, model.num_experts, format.c_str(), summary.tensors,
      format_bytes(static_cast<double>(summary.tensor_bytes)).c_str(), summary.shards,
      static_cast<unsigned long long>(seed), output.c_str());
}

void make_eagle3_head_from_hf_config(const HfConfigRequest& request, const std::string& output,
                                     uint64_t seed, bool force) {
  nlohmann::json config = read_json_file(request.config);
  if (request.layers > 0) config = slice_hf_config(config, request.layers, request.config);
  const ModelConfig target = parse_model_config(config, request.config);
  write_random_eagle3_head(output, target, {}, seed, force);
  const std::vector<int> taps = default_eagle3_tap_layers(target.num_layers);
  std::printf(
      "wrote a random EAGLE-3 head for %s (%d layers, hidden %d, vocab %d; taps layers %d, %d, "
      "%d), seed %llu, to %s\n",
      request.config.c_str(), target.num_layers, target.hidden_size, target.vocab_size, taps[0],
      taps[1], taps[2], static_cast<unsigned long long>(seed), output.c_str());
}

}  // namespace minimax::cli
