// All safetensors files of one checkpoint directory, as one name → tensor map. Reads
// model.safetensors.index.json when present (every tensor in exactly the shard the index names),
// else the single model.safetensors.
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/safetensors.h"

namespace minimax {

struct TensorRef {
  const SafetensorsFile* file = nullptr;
  const TensorInfo* info = nullptr;

  std::span<const uint8_t> data() const { return file->data(*info); }
  explicit operator bool() const { return info != nullptr; }
};

class TensorStore {
 public:
  // Opens every shard of `dir`. Errors name the index or shard file at fault: a tensor the index
  // maps to a shard that lacks it, a tensor in a shard that the index does not list, a name in two
  // shards, a missing shard file.
  explicit TensorStore(const std::string& dir);

  const std::string& dir() const { return dir_; }
  bool sharded() const { return sharded_; }
  // Shard file names (relative to dir), in index order.
  const std::vector<std::string>& shard_names() const { return shard_names_; }
  const SafetensorsFile& shard(size_t i) const { return *shards_[i]; }
  size_t num_shards() const { return shards_.size(); }

  // Every tensor name, sorted.
  std::vector<std::string> names() const;
  size_t size() const { return refs_.size(); }
  TensorRef find(const std::string& name) const;
  // Error naming the directory and tensor when absent.
  TensorRef at(const std::string& name) const;
  // Sum of tensor data bytes.
  uint64_t total_bytes() const;

 private:
  std::string dir_;
  bool sharded_ = false;
  std::vector<std::string> shard_names_;
  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  std::map<std::string, TensorRef> refs_;
};

}  // namespace minimax
