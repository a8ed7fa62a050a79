// Pieces of `minimax make-tiny` shared by its two kinds of checkpoint: the tiny / bench shapes
// (make_tiny_cmd.cc) and real widths from a released config.json (make_tiny_hf.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "checkpoint/model_config.h"

namespace minimax::cli {

// tokenizer.json (a byte-level BPE of about `vocab_budget` tokens trained on a fixed corpus, with
// the MiniMax special tokens) and tokenizer_config.json with `arch`'s chat template.
void write_tokenizer_files(const std::string& dir, Arch arch, int vocab_budget);
// generation_config.json with the tokenizer's bos / eos ids (dir/tokenizer.json must exist).
void write_generation_config(const std::string& dir);

struct HfConfigRequest {
  std::string config;     // --hf-config: a released config.json
  int layers = 0;         // --layers: keep the first N decoder layers (0 = all)
  double shard_gb = 5.0;  // --shard-gb: data bytes per shard, in 10^9
  size_t threads = 0;     // --threads: generator threads (cli/threads_flag.h)
};

// Adds --hf-config, --layers, --shard-gb and --threads to make-tiny; returns the --hf-config
// option.
CLI::Option* add_hf_config_options(CLI::App* cmd, HfConfigRequest& request);

// Writes the real-width random checkpoint `request` describes to `output` in `format`.
void make_tiny_from_hf_config(const HfConfigRequest& request, const std::string& output,
                              const std::string& format, uint64_t seed, bool force);

// --draft eagle3: a random EAGLE-3 head (checkpoint/eagle3_random.h) for the target that
// --hf-config (cut to --layers) describes, written to `output`.
void make_eagle3_head_from_hf_config(const HfConfigRequest& request, const std::string& output,
                                     uint64_t seed, bool force);

}  // namespace minimax::cli
