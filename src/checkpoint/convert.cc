// convert_checkpoint: plan, then stream shard by shard into DST.partial (or re-verify the shards a
// killed run left there), then the index, config and side files, then rename to DST.
#include "checkpoint/convert.h"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "base/atomic_output.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "checkpoint/convert_manifest.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/resumable_output.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

// Writes the pieces at their offsets after the header. Every 64 MiB it asks the kernel, from
// another thread (the request can block while ext4 allocates and submits), to start writing what
// is dirty, so that the disk works while pieces are produced and the fsync before the rename finds
// little left to do.
class FileSink : public ShardSink {
 public:
  FileSink(AtomicFile& file, uint64_t header_bytes) : file_(file), header_bytes_(header_bytes) {}
  ~FileSink() override {
    if (writeback_.valid()) writeback_.wait();
  }
  void put(const TensorDecl&, uint64_t offset, std::span<const uint8_t> bytes) override {
    file_.write_at(header_bytes_ + offset, bytes);
    written_ += bytes.size();
    const bool idle = !writeback_.valid() ||
                      writeback_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    if (written_ - written_at_kick_ >= (uint64_t{64} << 20) && idle) {
      writeback_ = std::async(std::launch::async, [this] { file_.start_writeback(); });
      written_at_kick_ = written_;
    }
  }
  uint64_t written() const { return written_; }

 private:
  AtomicFile& file_;
  uint64_t header_bytes_;
  uint64_t written_ = 0, written_at_kick_ = 0;
  std::future<void> writeback_;
};

// Thrown (and caught below) when a kept shard's bytes differ from what this run produces.
struct KeptShardDiffers {
  std::string where;
};

class CompareSink : public ShardSink {
 public:
  CompareSink(const MappedFile& file, uint64_t header_bytes)
      : file_(file), header_bytes_(header_bytes) {}
  void put(const TensorDecl& tensor, uint64_t offset, std::span<const uint8_t> bytes) override {
    const uint64_t at = header_bytes_ + offset;
    if (at + bytes.size() > file_.size() ||
        std::memcmp(file_.data() + at, bytes.data(), bytes.size()) != 0) {
      throw KeptShardDiffers{"tensor '" + tensor.name + "'"};
    }
    release_file_bytes(file_, at, bytes.size());
  }

 private:
  const MappedFile& file_;
  uint64_t header_bytes_;
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

// Writes a shard under its temporary name; the caller commits it (fsync, rename).
std::unique_ptr<AtomicFile> write_shard(const std::string& path, const OutputShard& shard,
                                        const std::vector<TensorDecl>& order,
                                        const ConvertOptions& options, ThreadPool& pool,
                                        RowStats& stats, Progress* progress) {
  auto file = std::make_unique<AtomicFile>(path);
  const std::vector<uint8_t> header = build_safetensors_header(order, converted_shard_metadata());
  file->write(header);
  FileSink sink(*file, header.size());
  stream_shard(shard, order, options.target, pool, options.limits, sink, stats, progress);
  if (sink.written() != shard.data_bytes())
    fail("convert: {}: {} of {} data bytes written", path, sink.written(), shard.data_bytes());
  return file;
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
  std::vector<std::string> shard_names;
  for (const OutputShard& shard : plan.shards) shard_names.push_back(shard.file_name);
  ResumableOutput out(
      options.output_dir, options.force, options.resume,
      source_fingerprint(options.input_dir, std::string(fp8_target_name(options.target))),
      shard_names);
  out.after_shard = options.after_shard;
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
    if (out.recorded_intact(shard.file_name)) {
      RowStats kept_stats;
      std::optional<std::string> difference =
          kept_shard_difference(path, shard, order, options, pool, kept_stats, bar);
      if (!difference) {
        out.kept();
        summary.rows.merge(kept_stats);
        summary.output_bytes += fs::file_size(path);
        continue;
      }
      log_warn("{}: kept shard differs from this run's output in {}; converting it again", path,
               *difference);
    }
    out.begin_shard(shard.file_name);
    RowStats stats;
    std::unique_ptr<AtomicFile> file = write_shard(path, shard, order, options, pool, stats, bar);
    summary.output_bytes += file->bytes_written();
    summary.rows.merge(stats);
    out.commit_shard(std::move(file), shard.file_name);
  }
  out.finish(plan.sharded, weight_map, plan.output_bytes, [&](const std::string& dir) {
    write_file_atomic(dir + "/config.json", plan.config.dump(2) + "\n");
    copy_side_files(options.input_dir, dir);
  });
  if (progress) progress->finish();
  summary.shards_written = out.counts().shards_written;
  summary.shards_kept = out.counts().shards_kept;
  summary.shards_redone = out.counts().shards_redone;
  summary.files_removed = out.counts().files_removed;
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace minimax
