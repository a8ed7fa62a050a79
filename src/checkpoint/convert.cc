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

// The manifest that a resumed run continues, after removing from DST.partial everything it does
// not record: a foreign shard, a stray file, a half-written temporary, the side files of a run
// killed while finishing. A manifest of another source is refused with DST.partial left as it is
// (it may be the work of hours for that source); one that is missing trusts nothing.
ConvertManifest resume_manifest(AtomicDirectory& out, const ConvertPlan& plan,
                                nlohmann::json fingerprint, ConvertSummary& summary) {
  std::optional<ConvertManifest> manifest;
  try {
    manifest = ConvertManifest::load(out.path());
  } catch (const Error& e) {
    out.keep_partial();
    fail("{}; rerun without --resume to start over", e.what());
  }
  if (!manifest) {
    log_warn("{}: no {} in it; nothing in it is trusted, every shard is converted again",
             out.path(), ConvertManifest::kFileName);
    manifest.emplace(out.path(), std::move(fingerprint));
  } else if (auto difference = fingerprint_difference(manifest->fingerprint(), fingerprint)) {
    out.keep_partial();
    fail(
        "{}: records the conversion of another source or target ({}); not resuming. Rerun with "
        "--input set to the source it was made from, or without --resume to start over",
        manifest->path(), *difference);
  }
  std::set<std::string> keep = {ConvertManifest::kFileName};
  std::set<std::string> planned;
  for (const OutputShard& shard : plan.shards) planned.insert(shard.file_name);
  std::vector<std::string> recorded;
  for (const auto& entry : manifest->shards()) recorded.push_back(entry.first);
  for (const std::string& name : recorded) {
    if (planned.count(name)) {
      keep.insert(name);
    } else {
      manifest->forget(name);
    }
  }
  summary.files_removed +=
      remove_entries_except(out.path(), keep, "not recorded in the resume manifest");
  return std::move(*manifest);
}

// Whether a shard the manifest records is still the file it recorded; else it is removed.
bool recorded_shard_intact(const std::string& path, const ShardRecord* recorded) {
  if (recorded == nullptr || !fs::exists(path)) return false;
  if (!fs::is_regular_file(path)) {
    log_warn("{}: not a regular file; converting it again", path);
    fs::remove_all(path);
    return false;
  }
  const ShardRecord now = hash_file(path);
  if (now == *recorded) return true;
  log_warn(
      "{}: {} bytes, hash {:016x}; the resume manifest recorded {} bytes, hash {:016x}; "
      "converting it again",
      path, now.size, now.hash, recorded->size, recorded->hash);
  fs::remove(path);
  return false;
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
  AtomicDirectory out(
      options.output_dir, options.force,
      options.resume ? AtomicDirectory::Start::kResume : AtomicDirectory::Start::kFresh);
  ConvertSummary summary;
  nlohmann::json fingerprint = source_fingerprint(options.input_dir, options.target);
  ConvertManifest manifest = out.resumed()
                                 ? resume_manifest(out, plan, std::move(fingerprint), summary)
                                 : ConvertManifest(out.path(), std::move(fingerprint));
  manifest.save();  // from here on DST.partial always holds one
  std::optional<Progress> progress;
  if (options.show_progress) progress.emplace("convert", plan.output_bytes);
  Progress* bar = progress ? &*progress : nullptr;

  summary.target = options.target;
  summary.fp8_weights = plan.fp8_weights;
  summary.bf16_weights = plan.bf16_weights;
  summary.copied = plan.copied;
  summary.fp8_copied = plan.fp8_copied;
  summary.dropped_scales = plan.dropped_scales;
  summary.source_bytes = plan.source_bytes;
  std::map<std::string, std::string> weight_map;
  // A finished shard is fsynced, renamed and hashed on another thread while the next one is
  // produced; the manifest records it once it has its final name, so a kill at any point leaves
  // only recorded shards trusted.
  std::future<std::pair<std::string, ShardRecord>> committing;
  size_t committed = 0;
  auto wait_for_commit = [&] {
    if (!committing.valid()) return;
    const auto [name, record] = committing.get();  // rethrows a failed fsync or rename
    manifest.record(name, record);
    manifest.save();
    if (options.after_shard) options.after_shard(++committed);
  };
  for (const OutputShard& shard : plan.shards) {
    std::vector<TensorDecl> decls;
    for (const OutputTensor& t : shard.tensors) {
      decls.push_back(t.decl);
      weight_map[t.decl.name] = shard.file_name;
    }
    const std::vector<TensorDecl> order = safetensors_write_order(decls);
    const std::string path = out.file(shard.file_name);
    if (out.resumed() && recorded_shard_intact(path, manifest.find(shard.file_name))) {
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
    }
    if (out.resumed() && manifest.find(shard.file_name)) {
      manifest.forget(shard.file_name);  // redone: recorded again once committed
      ++summary.shards_redone;
    }
    RowStats stats;
    std::unique_ptr<AtomicFile> file = write_shard(path, shard, order, options, pool, stats, bar);
    summary.output_bytes += file->bytes_written();
    summary.rows.merge(stats);
    ++summary.shards_written;
    wait_for_commit();
    committing = std::async(std::launch::async, [f = std::move(file), name = shard.file_name] {
      f->commit();
      return std::pair(name, hash_file(f->final_path()));
    });
  }
  wait_for_commit();
  // Nothing but the shards of this plan goes into the output, whatever appeared meanwhile.
  std::set<std::string> keep = {ConvertManifest::kFileName};
  for (const OutputShard& shard : plan.shards) keep.insert(shard.file_name);
  summary.files_removed +=
      remove_entries_except(out.path(), keep, "not written by this conversion");
  if (plan.sharded)
    write_safetensors_index(out.file("model.safetensors.index.json"), weight_map,
                            plan.output_bytes);
  write_file_atomic(out.file("config.json"), plan.config.dump(2) + "\n");
  copy_side_files(options.input_dir, out.path());
  if (progress) progress->finish();
  // The manifest describes the partial output only; a killed run between this and the rename
  // leaves a DST.partial whose resume trusts nothing and converts again.
  fs::remove(manifest.path());
  out.commit_durably();  // the side files too, and every rename
  summary.seconds = seconds_since(start);
  return summary;
}

}  // namespace minimax
