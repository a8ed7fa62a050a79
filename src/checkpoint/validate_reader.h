// The validator's own reading of a checkpoint directory, deliberately independent of the
// converter's (formats/safetensors.h, TensorStore): the index or the single model.safetensors,
// each shard's header read with read() and parsed with nlohmann, tensor bytes read with pread().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace minimax {

struct CheckedTensor {
  std::string name;
  std::string dtype;  // the header string, e.g. "F8_E4M3"
  std::vector<int64_t> shape;
  std::string file;          // shard path
  uint64_t file_offset = 0;  // absolute offset of the first byte in the file
  uint64_t nbytes = 0;

  uint64_t numel() const;
};

class CheckedCheckpoint {
 public:
  // Reads every shard header of `dir`. Errors name the file and tensor: unreadable or malformed
  // headers, a size that does not match dtype x shape, data past the end of the file, a tensor
  // that the index places in another shard or does not list, a tensor in two shards, an index
  // entry whose file or tensor is missing or whose file is not a .safetensors file of `dir`.
  explicit CheckedCheckpoint(const std::string& dir);
  ~CheckedCheckpoint();
  CheckedCheckpoint(const CheckedCheckpoint&) = delete;
  CheckedCheckpoint& operator=(const CheckedCheckpoint&) = delete;

  const std::string& dir() const { return dir_; }
  const std::map<std::string, CheckedTensor>& tensors() const { return tensors_; }
  // nullptr when absent.
  const CheckedTensor* find(const std::string& name) const;
  // Bytes [offset, offset + length) of `tensor` (thread-safe: pread on a descriptor per shard).
  std::vector<uint8_t> read(const CheckedTensor& tensor, uint64_t offset, uint64_t length) const;
  void read_into(const CheckedTensor& tensor, uint64_t offset, uint64_t length, uint8_t* out) const;
  const nlohmann::json& config() const { return config_; }
  // The shard files read (names inside dir()): the index's, or model.safetensors alone.
  const std::set<std::string>& shard_files() const { return shard_files_; }

 private:
  void read_shard(const std::string& file_name);

  std::string dir_;
  nlohmann::json config_;
  std::map<std::string, CheckedTensor> tensors_;
  std::map<std::string, int> descriptors_;  // shard path -> fd
  std::set<std::string> shard_files_;
};

// Bytes per element of a dtype string the validator reads; 0 for one it does not know.
int checked_dtype_bytes(const std::string& dtype);

}  // namespace minimax
