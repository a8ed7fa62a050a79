// ResumableOutput: DST.partial, its resume manifest, shard commits and the final rename.
#include "checkpoint/resumable_output.h"

#include <filesystem>
#include <optional>
#include <set>

#include "base/error.h"
#include "base/log.h"
#include "formats/safetensors_writer.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

// The manifest that a resumed run continues, after removing from DST.partial everything it does
// not record: a foreign shard, a stray file, a half-written temporary, the side files of a run
// killed while finishing. A manifest of another source is refused with DST.partial left as it is
// (it may be the work of hours for that source); one that is missing trusts nothing.
ConvertManifest resume_manifest(AtomicDirectory& out, const std::vector<std::string>& planned,
                                nlohmann::json fingerprint, ResumeCounts& counts) {
  std::optional<ConvertManifest> manifest;
  try {
    manifest = ConvertManifest::load(out.path());
  } catch (const Error& e) {
    out.keep_partial();
    fail("{}; rerun without --resume to start over", e.what());
  }
  if (!manifest) {
    log_warn("{}: no {} in it; nothing in it is trusted, every shard is written again", out.path(),
             ConvertManifest::kFileName);
    manifest.emplace(out.path(), std::move(fingerprint));
  } else if (auto difference = fingerprint_difference(manifest->fingerprint(), fingerprint)) {
    out.keep_partial();
    fail(
        "{}: records the output of another source or target ({}); not resuming. Rerun with "
        "--input set to the source it was made from, or without --resume to start over",
        manifest->path(), *difference);
  }
  std::set<std::string> keep = {ConvertManifest::kFileName};
  const std::set<std::string> planned_set(planned.begin(), planned.end());
  std::vector<std::string> recorded;
  for (const auto& entry : manifest->shards()) recorded.push_back(entry.first);
  for (const std::string& name : recorded) {
    if (planned_set.count(name)) {
      keep.insert(name);
    } else {
      manifest->forget(name);
    }
  }
  counts.files_removed +=
      remove_entries_except(out.path(), keep, "not recorded in the resume manifest");
  return std::move(*manifest);
}

}  // namespace

ResumableOutput::ResumableOutput(const std::string& output_dir, bool force, bool resume,
                                 nlohmann::json fingerprint,
                                 std::vector<std::string> planned_shards)
    : dir_(output_dir, force,
           resume ? AtomicDirectory::Start::kResume : AtomicDirectory::Start::kFresh),
      planned_(std::move(planned_shards)),
      manifest_(dir_.resumed() ? resume_manifest(dir_, planned_, std::move(fingerprint), counts_)
                               : ConvertManifest(dir_.path(), std::move(fingerprint))) {
  manifest_.save();  // from here on DST.partial always holds one
  // A failed run keeps DST.partial only where it was killed; an error removes it.
}

ResumableOutput::~ResumableOutput() {
  // A shard still being committed must finish with its file before the directory goes.
  if (committing_.valid()) committing_.wait();
}

bool ResumableOutput::recorded_intact(const std::string& name) {
  const std::string path = file(name);
  const ShardRecord* recorded = manifest_.find(name);
  if (!resumed() || recorded == nullptr || !fs::exists(path)) return false;
  if (!fs::is_regular_file(path)) {
    log_warn("{}: not a regular file; writing it again", path);
    fs::remove_all(path);
    return false;
  }
  const ShardRecord now = hash_file(path);
  if (now == *recorded) return true;
  log_warn(
      "{}: {} bytes, hash {:016x}; the resume manifest recorded {} bytes, hash {:016x}; "
      "writing it again",
      path, now.size, now.hash, recorded->size, recorded->hash);
  fs::remove(path);
  return false;
}

void ResumableOutput::begin_shard(const std::string& name) {
  if (!manifest_.find(name)) return;
  fs::remove(file(name));
  manifest_.forget(name);  // redone: recorded again once committed
  ++counts_.shards_redone;
}

void ResumableOutput::wait_for_commit() {
  if (!committing_.valid()) return;
  const auto [name, record] = committing_.get();  // rethrows a failed fsync or rename
  manifest_.record(name, record);
  manifest_.save();
  if (after_shard) after_shard(++committed_);
}

void ResumableOutput::commit_shard(std::unique_ptr<AtomicFile> file, const std::string& name) {
  ++counts_.shards_written;
  wait_for_commit();
  committing_ = std::async(std::launch::async, [f = std::move(file), name] {
    f->commit();
    return std::pair(name, hash_file(f->final_path()));
  });
}

void ResumableOutput::finish(bool sharded, const std::map<std::string, std::string>& weight_map,
                             uint64_t total_size,
                             const std::function<void(const std::string& dir)>& write_rest) {
  wait_for_commit();
  // Nothing but the planned shards goes into the output, whatever appeared meanwhile.
  std::set<std::string> keep = {ConvertManifest::kFileName};
  keep.insert(planned_.begin(), planned_.end());
  counts_.files_removed += remove_entries_except(path(), keep, "not written by this run");
  if (sharded)
    write_safetensors_index(file("model.safetensors.index.json"), weight_map, total_size);
  write_rest(path());
  // The manifest describes the partial output only; a killed run between this and the rename
  // leaves a DST.partial whose resume trusts nothing and writes every shard again.
  fs::remove(manifest_.path());
  dir_.commit_durably();  // the side files too, and every rename
}

}  // namespace minimax
