// `minimax quantize --input DIR --output DIR --format FORMAT`: any quantized row of
// quant_config.cc's scheme table (fp8-block, fp8-channel, mxfp8, mxfp4, mxfp4-fp8attn, nvfp4).
#include <cstdio>

#include "base/progress.h"
#include "checkpoint/quantize.h"
#include "cli/commands.h"

namespace minimax::cli {

void register_quantize(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "quantize", "Re-encode a BF16 checkpoint in a published quantized layout (test checkpoints)");
  auto opts = std::make_shared<QuantizeOptions>();
  auto format = std::make_shared<std::string>();
  cmd->add_option("--input", opts->input_dir, "BF16 checkpoint directory")->required();
  cmd->add_option("--output", opts->output_dir, "Output directory (must not exist)")->required();
  cmd->add_option("--format", *format,
                  "fp8-block, fp8-channel, mxfp8, mxfp4, mxfp4-fp8attn (MXFP4 experts, FP8 "
                  "attention) or nvfp4")
      ->required();
  cmd->add_flag("--force", opts->force, "Replace an existing output directory");
  auto quiet = std::make_shared<bool>(false);
  cmd->add_flag("--quiet", *quiet, "No progress bar");
  cmd->callback([=] {
    opts->scheme = parse_quant_scheme(*format);
    opts->show_progress = !*quiet;
    QuantizeSummary s = quantize_checkpoint(*opts);
    std::printf("quantized %zu tensors to %s, copied %zu; %s in, %s out -> %s\n",
                s.tensors_quantized, format->c_str(), s.tensors_copied,
                format_bytes(s.bytes_in).c_str(), format_bytes(s.bytes_out).c_str(),
                opts->output_dir.c_str());
  });
}

}  // namespace minimax::cli
