// `minimax make-tiny --arch m2|m3 --output DIR [--format F] [--seed N] [--shape tiny|bench]
// [--mtp-layers N]`: a deterministic random checkpoint with the real architecture at tiny size, a
// trained byte-level BPE tokenizer with the MiniMax special tokens, the chat template and
// generation config: the project's test fixture. `--shape bench` gives the M2 or M3 CPU benchmark
// shape instead (checkpoint/tiny_config.h; vocabulary padded to 32768); `--mtp-layers` adds MTP
// modules (checkpoint/tiny_checkpoint.h). `--hf-config CONFIG.json --layers N` gives a released
// model's real width instead (make_tiny_hf.cc).
#include <cstdio>
#include <filesystem>
#include <optional>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/progress.h"
#include "checkpoint/arch/architecture.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "cli/commands.h"
#include "cli/make_tiny.h"
#include "text/bpe_tokenizer.h"
#include "text/bpe_trainer.h"
#include "text/jinja/builtin_templates.h"

namespace minimax::cli {
namespace {

// Text the tiny tokenizer is trained on: prose, numbers, code and the chat markup, so that merges
// exist for the strings the tests send.
std::vector<std::string> tiny_corpus() {
  return {
      "The quick brown fox jumps over the lazy dog. A tiny model has tiny answers.",
      "What is 12 + 35? The answer is 47. What is 128 * 4? It is 512.",
      "You are a helpful assistant. Please answer the question briefly.",
      "def add(a, b):\n    return a + b\n\nprint(add(2, 3))\n",
      "The key for needle seven is blue-cat-42. Remember it and repeat it later.",
      "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter "
      "name=\"city\">Paris</parameter>\n"
      "</invoke>\n</minimax:tool_call>",
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Berlin\", \"unit\": \"celsius\"}}",
      "Die Straße ist naß. 東京は晴れです。 Ça va très bien, merci ! 🙂",
      "system\nuser\nai\ntool\ndeveloper\n<response>sunny, 21 degrees</response>",
      "Let me think step by step. First add the units, then carry the tens.",
  };
}

}  // namespace

void write_tokenizer_files(const std::string& dir, Arch arch, int vocab_budget) {
  nlohmann::json tokenizer =
      train_byte_level_bpe(tiny_corpus(), vocab_budget, minimax_special_tokens());
  write_file_atomic(dir + "/tokenizer.json", tokenizer.dump(2) + "\n");
  auto chat_template = builtin_chat_template(architecture_record(arch).chat_template);
  if (!chat_template) fail("make-tiny: no built-in chat template for {}", arch_name(arch));
  nlohmann::ordered_json config = {
      {"tokenizer_class", "GPT2Tokenizer"},
      {"bos_token", "]~!b["},
      {"eos_token", "[e~["},
      {"unk_token", "]!d~["},
      {"pad_token", "]!p~["},
      {"add_bos_token", false},
      {"add_eos_token", false},
      {"clean_up_tokenization_spaces", false},
      {"model_max_length", 4096},
      {"chat_template", std::string(*chat_template)},
  };
  write_file_atomic(dir + "/tokenizer_config.json", config.dump(2) + "\n");
}

void write_generation_config(const std::string& dir) {
  const BpeTokenizer tokenizer = BpeTokenizer::from_file(dir + "/tokenizer.json");
  nlohmann::ordered_json generation = {
      {"bos_token_id", *tokenizer.token_id("]~b]")},
      {"eos_token_id", *tokenizer.token_id("[e~[")},
      {"do_sample", true},
      {"temperature", 1.0},
      {"top_p", 0.95},
      {"top_k", 40},
  };
  write_file_atomic(dir + "/generation_config.json", generation.dump(2) + "\n");
}

void register_make_tiny(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("make-tiny", "Write a deterministic tiny random MiniMax checkpoint");
  auto arch = std::make_shared<std::string>("m2");
  auto output = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("bf16");
  auto seed = std::make_shared<uint64_t>(1);
  auto force = std::make_shared<bool>(false);
  auto shape = std::make_shared<std::string>("tiny");
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("--quiet", *quiet, "No progress bar");
  auto* arch_option =
      cmd->add_option("--arch", *arch, "m2 or m3")->check(CLI::IsMember({"m2", "m3"}));
  auto mtp_layers = std::make_shared<int>(0);
  cmd->add_option("--output", *output, "Output directory (must not exist)")->required();
  cmd->add_option(
      "--format", *format,
      "bf16, fp8-block, fp8-channel, mxfp4, nvfp4, mxfp8 (MiniMax-M3-MXFP8's layout) or "
      "mxfp4-fp8attn (AMD Quark MXFP4 with FP8 attention)");
  cmd->add_option("--seed", *seed, "Random seed (same seed, same bytes)");
  cmd->add_flag("--force", *force, "Replace an existing output directory");
  auto* shape_option =
      cmd->add_option("--shape", *shape,
                      "tiny (tests), parallel (tiny, widened for 2-4 ranks), or bench (CPU "
                      "benchmark shape: M2 2.48 B, or M3 with MSA layers)")
          ->check(CLI::IsMember({"tiny", "parallel", "bench"}));
  auto* mtp_option =
      cmd->add_option("--mtp-layers", *mtp_layers,
                      "Add this many multi-token-prediction modules (skipped by the engine; for "
                      "converter tests), at most the config's num_mtp_modules")
          ->check(CLI::NonNegativeNumber);
  auto draft = std::make_shared<std::string>();
  auto hf = std::make_shared<HfConfigRequest>();
  auto* hf_option = add_hf_config_options(cmd, *hf);
  cmd->add_option("--draft", *draft,
                  "eagle3: write a random EAGLE-3 draft head for the --hf-config target instead "
                  "(docs/eagle3.md)")
      ->check(CLI::IsMember({"eagle3"}))
      ->needs(hf_option);
  hf_option->excludes(arch_option)->excludes(shape_option)->excludes(mtp_option);
  cmd->callback([=] {
    if (!draft->empty()) return make_eagle3_head_from_hf_config(*hf, *output, *seed, *force);
    if (!hf->config.empty()) return make_tiny_from_hf_config(*hf, *output, *format, *seed, *force);
    const Arch a = *arch == "m2" ? Arch::kM2 : Arch::kM3;
    const bool bench = *shape == "bench";
    const QuantScheme scheme = parse_quant_scheme(*format);
    // The BF16 checkpoint is built first (in its own partial directory) and quantized from there.
    const std::string bf16_dir = scheme == QuantScheme::kNone ? *output : *output + ".bf16";
    const int steps = scheme == QuantScheme::kNone ? 1 : 2;
    {
      std::optional<ProgressStep> step;  // two bars: number them
      if (steps == 2) step.emplace(1, steps);
      AtomicDirectory out(bf16_dir, *force);
      write_tokenizer_files(out.path(), a, 512);
      const int vocab = BpeTokenizer::from_file(out.file("tokenizer.json")).vocab_size();
      constexpr int kBenchVocab = 32768;
      if (bench && vocab > kBenchVocab)
        fail("--shape bench: the tokenizer has {} tokens, more than {}", vocab, kBenchVocab);
      // Embedding rows, padded as real models pad (the benchmark shape to its full vocabulary).
      const int padded_vocab = bench ? kBenchVocab : (vocab + 63) / 64 * 64;
      const ModelConfig config =
          parse_model_config(bench                  ? bench_config_json(padded_vocab, a)
                             : *shape == "parallel" ? parallel_config_json(a, padded_vocab)
                                                    : tiny_config_json(a, padded_vocab),
                             *shape + " config");
      write_tiny_weights(config, out.path(), *seed, 2, *mtp_layers, !*quiet);
      write_generation_config(out.path());
      out.commit();
    }
    if (scheme != QuantScheme::kNone) {
      QuantizeOptions q{bf16_dir, *output, scheme, *force, !*quiet};
      const ProgressStep step(2, steps);
      quantize_checkpoint(q);
      std::filesystem::remove_all(bf16_dir);
    }
    std::printf("wrote %s %s checkpoint (%s, seed %llu) to %s\n", shape->c_str(), arch->c_str(),
                format->c_str(), static_cast<unsigned long long>(*seed), output->c_str());
  });
}

}  // namespace minimax::cli
