// convert_checkpoint: plan, then stream shard by shard into DST.partial (or re-verify the shards a
// killed run left there), then the index, config and side files, then rename to DST.
#include "checkpoint/convert.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/log.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/quantize.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

class WriterSink : public ShardSink {
 public:
  explicit WriterSink(SafetensorsWriter& writer) : writer_(writer) {}
  void put(std::span<const uint8_t> bytes) override { writer_.write(bytes); }

 private:
  SafetensorsWriter& writer_;
};

// Thrown (and caught below) when a kept shard's bytes differ from what this run produces.
struct KeptShardDiffers {
  std::string where;
};

class CompareSink : public ShardSink {
 public:
  CompareSink(const MappedFile& file, uint64_t offset) : file_(file), offset_(offset) {}
  void begin_tensor(const TensorDecl& decl) override { tensor_ = decl.name; }
  void put(std::span<const uint8_t> bytes) override {
    if (offset_ + bytes.size() > file_.size() ||
        std::memcmp(file_.data() + offset_, bytes.data(), bytes.size()) != 0) {
      throw KeptShardDiffers{"tensor '" + tensor_ + "'"};
    }
    release_file_bytes(file_, offset_, bytes.size());
    offset_ += bytes.size();
  }

 private:
  const MappedFile& file_;
  uint64_t offset_;
  std::string tensor_;
};

// Re-produces (and so re-verifies in float64) every byte of a shard kept from an interrupted run
// and compares it with the file. Empty when identical, else what differs.
std::optional<std::string> kept_shard_difference(const std::string& path, const OutputShard& shard,
                                                 const std::vector<TensorDecl>& order,
                                                 const ConvertOptions& options, ThreadPool& pool,
                                                 RowStats& stats, Progress* progress) {
  MappedFile file(path);
  const std::vector<uint8_t> header = build_safetensors_header(order, converted_shard_metadata());
  if (file.size() != header.size() + shard.data_bytes() ||
      std::memcmp(file.data(), header.data(), header.size()) != 0) {
    return "its header or size";
  }
  CompareSink sink(file, header.size());
  try {
    stream_shard(shard, order, options.target, pool, options.limits, sink, stats, progress);
  } catch (const KeptShardDiffers& differs) {
    return differs.where;
  }
  return std::nullopt;
}

void remove_temporaries(const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".tmp") fs::remove(entry.path());
}

uint64_t write_shard(const std::string& path, const OutputShard& shard,
                     const std::vector<TensorDecl>& order, const ConvertOptions& options,
                     ThreadPool& pool, RowStats& stats, Progress* progress) {
  std::vector<TensorDecl> decls;
  for (const OutputTensor& t : shard.tensors) decls.push_back(t.decl);
  SafetensorsWriter writer(path, decls, converted_shard_metadata());
  // Resume compares kept shards in `order`; it must be the layout the writer really uses.
  if (writer.order().size() != order.size())
    fail("convert: {}: writer layout differs from the planned layout", path);
  for (size_t i = 0; i < order.size(); ++i)
    if (writer.order()[i].name != order[i].name)
      fail("convert: {}: writer layout differs from the planned layout at '{}'", path,
           order[i].name);
  WriterSink sink(writer);
  stream_shard(shard, order, options.target, pool, options.limits, sink, stats, progress);
  writer.finish();
  return writer.file_size();
}

}  // namespace

ConvertSummary convert_checkpoint(const ConvertOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  // Everything about the source is checked before DST.partial exists.
  const ModelConfig model = load_model_config(options.input_dir);
  const QuantConfig quant = load_quant_config(options.input_dir);
  if (quant.scheme != QuantScheme::kMxfp4 && quant.scheme != QuantScheme::kMxfp4Fp8Attn) {
    fail("{}/config.json: convert needs an AMD Quark MXFP4 checkpoint, this one is {}",
         options.input_dir, quant_scheme_name(quant.scheme));
  }
  const TensorStore source(options.input_dir);
  const ConvertPlan plan = plan_conversion(source, model, quant, options.target);

  ThreadPool pool(options.threads);
  AtomicDirectory out(
      options.output_dir, options.force,
      options.resume ? AtomicDirectory::Start::kResume : AtomicDirectory::Start::kFresh);
  if (out.resumed()) remove_temporaries(out.path());
  std::optional<Progress> progress;
  if (options.show_progress) progress.emplace("convert", plan.output_bytes);
  Progress* bar = progress ? &*progress : nullptr;

  ConvertSummary summary;
  summary.target = options.target;
  summary.fp8_weights = plan.fp8_weights;
  summary.bf16_weights = plan.bf16_weights;
  summary.copied = plan.copied;
  summary.fp8_copied = plan.fp8_copied;
  summary.dropped_scales = plan.dropped_scales;
  summary.source_bytes = plan.source_bytes;
  std::map<std::string, std::string> weight_map;
  for (const OutputShard& shard : plan.shards) {
    std::vector<TensorDecl> decls;
    for (const OutputTensor& t : shard.tensors) {
      decls.push_back(t.decl);
      weight_map[t.decl.name] = shard.file_name;
    }
    const std::vector<TensorDecl> order = safetensors_write_order(decls);
    const std::string path = out.file(shard.file_name);
    if (out.resumed() && fs::exists(path)) {
      RowStats kept_stats;
      std::optional<std::string> difference =
          kept_shard_difference(path, shard, order, options, pool, kept_stats, bar);
      if (!difference) {
        ++summary.shards_kept;
        summary.rows.merge(kept_stats);
        summary.output_bytes += fs::file_size(path);
        continue;
      }
      log_warn("{}: kept shard differs from this run's output in {}; converting it again", path,
               *difference);
      fs::remove(path);
      ++summary.shards_redone;
    }
    RowStats stats;
    summary.output_bytes += write_shard(path, shard, order, options, pool, stats, bar);
    summary.rows.merge(stats);
    ++summary.shards_written;
    if (options.after_shard) options.after_shard(summary.shards_written);
  }
  if (plan.sharded)
    write_safetensors_index(out.file("model.safetensors.index.json"), weight_map,
                            plan.output_bytes);
  write_file_atomic(out.file("config.json"), plan.config.dump(2) + "\n");
  copy_side_files(options.input_dir, out.path());
  if (progress) progress->finish();
  out.commit();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace minimax
