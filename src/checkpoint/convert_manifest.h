// The record `minimax convert` keeps inside DST.partial so that `--resume` trusts only what this
// converter finished: the source it converted (a fingerprint) and, for every shard it completed,
// the file's size and a hash of its bytes. Anything else found in DST.partial is removed, so a
// foreign shard or a stray file can never end up in the output. docs/convert.md describes it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

namespace minimax {

// A completed output shard as the manifest records it.
struct ShardRecord {
  uint64_t size = 0;
  uint64_t hash = 0;  // content_hash of the whole file
  bool operator==(const ShardRecord&) const = default;
};

// A 64-bit hash of a file's bytes (not cryptographic: it tells a shard this run wrote from one
// that was changed or replaced since, which the float64 re-verification then confirms). Reads the
// file through a small buffer; Error naming the path when it cannot be read.
ShardRecord hash_file(const std::string& path);

// What identifies a conversion's input: the target (convert's "ocp", quantize's format and kept
// roles), and for the source directory the size and modification time of every .safetensors file
// and a hash of config.json and of the index. Cheap (no tensor data is read); any difference means
// the kept shards may belong to another input.
nlohmann::json source_fingerprint(const std::string& input_dir, const std::string& target);

class ConvertManifest {
 public:
  static constexpr const char* kFileName = "minimax-convert-manifest.json";

  ConvertManifest(std::string dir, nlohmann::json fingerprint)
      : dir_(std::move(dir)), fingerprint_(std::move(fingerprint)) {}

  // The manifest in `dir`, or nullopt when there is none. Error naming the file when it cannot be
  // read or is not a manifest this version writes.
  static std::optional<ConvertManifest> load(const std::string& dir);

  std::string path() const { return dir_ + "/" + kFileName; }
  const nlohmann::json& fingerprint() const { return fingerprint_; }
  const std::map<std::string, ShardRecord>& shards() const { return shards_; }
  const ShardRecord* find(const std::string& name) const;
  void record(const std::string& name, const ShardRecord& shard) { shards_[name] = shard; }
  void forget(const std::string& name) { shards_.erase(name); }
  // Written under a temporary name, fsynced and renamed (write_file_atomic).
  void save() const;

 private:
  std::string dir_;
  nlohmann::json fingerprint_;
  std::map<std::string, ShardRecord> shards_;
};

// Where two fingerprints first differ, e.g. "model-00001-of-00002.safetensors: size 10 != 12";
// nullopt when they are equal.
std::optional<std::string> fingerprint_difference(const nlohmann::json& recorded,
                                                  const nlohmann::json& current);

// Removes every entry of `dir` whose name is not in `keep` (files, temporaries, directories), with
// a warning naming each; returns how many were removed.
size_t remove_entries_except(const std::string& dir, const std::set<std::string>& keep,
                             const std::string& why);

}  // namespace minimax
