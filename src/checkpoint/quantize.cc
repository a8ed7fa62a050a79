// quantize_checkpoint: any published layout -> another, Linear by Linear, shard by shard.
#include "checkpoint/quantize.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/atomic_output.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "base/progress.h"
#include "base/thread_pool.h"
#include "checkpoint/convert_manifest.h"
#include "checkpoint/convert_plan.h"
#include "checkpoint/convert_stream.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quantize_plan.h"
#include "checkpoint/weight_codec.h"
#include "formats/float_formats.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"

namespace minimax {

namespace fs = std::filesystem;

QuantScheme parse_quant_scheme(const std::string& text) {
  if (std::optional<QuantScheme> s = parse_quant_scheme_name(text)) return *s;
  std::string names;
  for (QuantScheme s : all_quant_schemes())
    names += (names.empty() ? "" : ", ") + std::string(quant_scheme_name(s));
  fail("--format: unknown format '{}' (expected one of {})", text, names);
}

void copy_side_files(const std::string& src_dir, const std::string& dst_dir) {
  for (const auto& entry : fs::directory_iterator(src_dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file()) continue;
    if (entry.path().extension() == ".safetensors" || name == "model.safetensors.index.json" ||
        name == "config.json" || name == "hf_quant_config.json") {
      continue;
    }
    fs::copy_file(entry.path(), fs::path(dst_dir) / name, fs::copy_options::overwrite_existing);
  }
}

namespace {

constexpr uint64_t kCopyPiece = uint64_t{16} << 20;  // bytes copied per write

// The bytes of one requantized Linear's output tensors, in RequantizedLinear::outputs order.
std::vector<std::vector<uint8_t>> requantize(const TensorStore& source,
                                             const RequantizedLinear& linear) {
  const std::vector<float> values =
      decode_weight(source, linear.weight_name, linear.from, linear.rows, linear.cols);
  for (const TensorRef& ref : linear.sources) release_tensor_bytes(ref, 0, ref.info->nbytes());
  if (linear.to != LinearLayout::kBf16)
    return encode_weight(values, linear.rows, linear.cols, linear.to, linear.outputs);
  std::vector<uint8_t> bf16(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t b = f32_to_bf16(values[i]);
    std::memcpy(bf16.data() + 2 * i, &b, 2);
  }
  return {std::move(bf16)};
}

// Writes one output shard under its temporary name: copies in pieces (their source pages dropped
// once written), Linears a batch of `pool.size()` at a time. The caller commits it.
std::unique_ptr<AtomicFile> write_shard(const std::string& path, const QuantizeShard& shard,
                                        const TensorStore& source, ThreadPool& pool,
                                        Progress* progress) {
  const std::vector<TensorDecl> order = safetensors_write_order(shard.decls());
  const std::vector<uint8_t> header = build_safetensors_header(order, converted_shard_metadata());
  std::map<std::string, uint64_t> offset_of;
  uint64_t offset = header.size();
  for (const TensorDecl& d : order) {
    offset_of[d.name] = offset;
    offset += d.nbytes();
  }
  auto file = std::make_unique<AtomicFile>(path);
  file->write(header);
  uint64_t written = 0;
  auto put = [&](const TensorDecl& decl, uint64_t at, std::span<const uint8_t> bytes) {
    file->write_at(offset_of.at(decl.name) + at, bytes);
    written += bytes.size();
    if (progress) progress->add(bytes.size());
  };
  for (const CopiedTensor& copy : shard.copies) {
    const std::span<const uint8_t> bytes = copy.source.data();
    if (bytes.size() != copy.decl.nbytes())
      fail("quantize: '{}' has {} bytes, declared {}", copy.decl.name, bytes.size(),
           copy.decl.nbytes());
    for (uint64_t at = 0; at < bytes.size(); at += kCopyPiece) {
      const uint64_t n = std::min<uint64_t>(kCopyPiece, bytes.size() - at);
      put(copy.decl, at, bytes.subspan(at, n));
      release_tensor_bytes(copy.source, at, n);
    }
  }
  for (size_t first = 0; first < shard.linears.size(); first += pool.size()) {
    const size_t count = std::min(pool.size(), shard.linears.size() - first);
    std::vector<std::vector<std::vector<uint8_t>>> encoded(count);
    pool.parallel_for(count, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin; i < end; ++i)
        encoded[i] = requantize(source, shard.linears[first + i]);
    });
    for (size_t i = 0; i < count; ++i) {
      const RequantizedLinear& linear = shard.linears[first + i];
      for (size_t t = 0; t < linear.outputs.size(); ++t) {
        const StoredTensor& s = linear.outputs[t];
        const TensorDecl decl{s.name, s.dtype, s.shape};
        if (encoded[i][t].size() != decl.nbytes())
          fail("quantize: '{}' encoded to {} bytes, its layout says {}", s.name,
               encoded[i][t].size(), decl.nbytes());
        put(decl, 0, encoded[i][t]);
      }
    }
  }
  if (written != shard.data_bytes())
    fail("quantize: {}: {} of {} data bytes written", path, written, shard.data_bytes());
  return file;
}

}  // namespace

QuantizeSummary quantize_checkpoint(const QuantizeOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // Everything about the source is checked before DST.partial exists.
  const ModelConfig model = load_model_config(options.input_dir);
  const QuantConfig source_quant = load_quant_config(options.input_dir);
  const TensorStore source(options.input_dir);
  const QuantizePlan plan =
      plan_quantization(source, model, source_quant, options.scheme, options.keep);

  // What identifies the output besides the source: the format and the kept roles.
  std::string target(quant_scheme_name(options.scheme));
  for (TensorRole role : options.keep) target += " keep " + std::string(tensor_role_name(role));
  std::vector<std::string> shard_names;
  for (const QuantizeShard& shard : plan.shards) shard_names.push_back(shard.file_name);
  ResumableOutput out(options.output_dir, options.force, options.resume,
                      source_fingerprint(options.input_dir, target), shard_names);
  out.after_shard = options.after_shard;
  ThreadPool pool(options.threads);
  std::optional<Progress> progress;
  if (options.show_progress) {
    progress.emplace("quantize", plan.output_bytes);
    progress->show_after(std::chrono::seconds(1));
  }
  Progress* bar = progress ? &*progress : nullptr;

  QuantizeSummary summary;
  summary.from = source_quant.scheme;
  summary.to = options.scheme;
  summary.tensors_quantized = plan.requantized;
  summary.tensors_kept = plan.kept;
  summary.tensors_copied = plan.copied;
  summary.scales_consumed = plan.scales_consumed;
  summary.bytes_in = plan.source_bytes;
  std::map<std::string, std::string> weight_map;
  for (const QuantizeShard& shard : plan.shards) {
    for (const TensorDecl& d : shard.decls()) weight_map[d.name] = shard.file_name;
    // A shard the manifest records with its size and hash is this tool's output for this source
    // and target (the fingerprint says so), so it is kept as it is.
    if (out.recorded_intact(shard.file_name)) {
      out.kept();
      summary.bytes_out += fs::file_size(out.file(shard.file_name));
      if (bar) bar->add(shard.data_bytes());
      continue;
    }
    out.begin_shard(shard.file_name);
    std::unique_ptr<AtomicFile> file =
        write_shard(out.file(shard.file_name), shard, source, pool, bar);
    summary.bytes_out += file->bytes_written();
    out.commit_shard(std::move(file), shard.file_name);
  }
  out.finish(plan.sharded, weight_map, plan.output_bytes, [&](const std::string& dir) {
    write_file_atomic(dir + "/config.json", plan.config.dump(2) + "\n");
    if (plan.hf_quant_config)
      write_file_atomic(dir + "/hf_quant_config.json", plan.hf_quant_config->dump(2) + "\n");
    copy_side_files(options.input_dir, dir);
  });
  if (progress) progress->finish();
  summary.shards = out.counts();
  summary.seconds = seconds_since(start);
  log_info("quantize: {} Linears {} -> {}, {} kept, {} tensors copied", plan.requantized,
           quant_scheme_name(source_quant.scheme), quant_scheme_name(options.scheme), plan.kept,
           plan.copied);
  return summary;
}

std::string format_quantize_summary(const QuantizeSummary& s, const QuantizeOptions& options) {
  std::string out;
  out += fmt::format("quantize summary ({} -> {})\n", quant_scheme_name(s.from),
                     quant_scheme_name(s.to));
  std::string kept_roles;
  for (TensorRole role : options.keep)
    kept_roles += (kept_roles.empty() ? "" : ", ") + std::string(tensor_role_name(role));
  out += fmt::format(
      "  tensors     {} Linears decoded and re-encoded, {} kept as they are{}, {} copied byte for "
      "byte, {} source scale tensors consumed\n",
      s.tensors_quantized, s.tensors_kept, kept_roles.empty() ? "" : " (" + kept_roles + ")",
      s.tensors_copied, s.scales_consumed);
  out += fmt::format("  shards      {} written, {} kept from the interrupted run, {} redone\n",
                     s.shards.shards_written, s.shards.shards_kept, s.shards.shards_redone);
  if (s.shards.files_removed > 0)
    out += fmt::format(
        "  removed     {} files of the interrupted run's output that its resume manifest does not "
        "record (named on stderr)\n",
        s.shards.files_removed);
  const double ratio = s.bytes_in > 0 ? 100.0 * s.bytes_out / s.bytes_in : 0;
  out +=
      fmt::format("  size        {} of tensor data in, {} of shards out ({:.1f}% of the source)\n",
                  format_bytes(s.bytes_in), format_bytes(s.bytes_out), ratio);
  out += fmt::format("  time        {:.2f} s\n", s.seconds);
  out += fmt::format(
      "  what it cost: the source's logits as the base, then the output against them "
      "(docs/perplexity.md; TEXT is any text file)\n"
      "    minimax perplexity --model {0} --file TEXT --kl-divergence-base {0}.kl\n"
      "    minimax perplexity --model {1} --file TEXT --kl-divergence --kl-divergence-base "
      "{0}.kl\n",
      options.input_dir, options.output_dir);
  return out;
}

}  // namespace minimax
