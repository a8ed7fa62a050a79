// The output side that `minimax convert` and `minimax quantize` share: a checkpoint written shard
// by shard into DST.partial with a resume manifest (convert_manifest.h) that records each shard
// once it is fsynced and renamed, so that `--resume` trusts only shards this tool finished for the
// same source and target; then the index, config.json and side files, and a durable rename to DST.
// docs/convert.md ("Resuming") describes the rules.
#pragma once

#include <cstddef>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "base/atomic_output.h"
#include "checkpoint/convert_manifest.h"

namespace minimax {

struct ResumeCounts {
  size_t shards_written = 0, shards_kept = 0, shards_redone = 0;
  size_t files_removed = 0;  // entries of DST.partial no manifest recorded (each named on stderr)
};

class ResumableOutput {
 public:
  // Opens OUTPUT_DIR.partial: fresh (an existing DST needs `force`), or with `resume` the one a
  // killed run left, from which everything its manifest does not record for one of
  // `planned_shards` is removed. A manifest of another `fingerprint` (source_fingerprint) is
  // refused naming the difference, DST.partial left as it is.
  ResumableOutput(const std::string& output_dir, bool force, bool resume,
                  nlohmann::json fingerprint, std::vector<std::string> planned_shards);
  ~ResumableOutput();

  bool resumed() const { return dir_.resumed(); }
  std::string file(const std::string& name) const { return dir_.file(name); }
  const std::string& path() const { return dir_.path(); }

  // Whether `name` is a shard the manifest records whose file still has the recorded size and
  // hash (the caller may check it further, then call kept() or write it again). Otherwise false,
  // and a file of that name is removed.
  bool recorded_intact(const std::string& name);
  void kept() { ++counts_.shards_kept; }
  // Before writing `name`: a recorded shard that is being redone is forgotten (and counted).
  void begin_shard(const std::string& name);
  // Hands over a shard written under its temporary name: fsynced, renamed and hashed on another
  // thread while the caller produces the next one; recorded in the manifest once renamed, then
  // `after_shard(shards committed by this run)` is called (may be empty).
  void commit_shard(std::unique_ptr<AtomicFile> file, const std::string& name);
  std::function<void(size_t)> after_shard;

  // Waits for the last shard, removes anything that is not a planned shard, writes the index when
  // `sharded` (weight_map: tensor -> shard, total_size: tensor data bytes), then lets
  // `write_rest(dir)` add config.json and side files to DST.partial, removes the manifest and
  // renames DST.partial to DST durably.
  void finish(bool sharded, const std::map<std::string, std::string>& weight_map,
              uint64_t total_size, const std::function<void(const std::string& dir)>& write_rest);

  const ResumeCounts& counts() const { return counts_; }

 private:
  void wait_for_commit();

  AtomicDirectory dir_;
  std::vector<std::string> planned_;
  ResumeCounts counts_;  // before manifest_, whose opening counts removed files
  ConvertManifest manifest_;
  std::future<std::pair<std::string, ShardRecord>> committing_;
  size_t committed_ = 0;
};

}  // namespace minimax
