// Streaming safetensors writer: the header is fixed from the tensor declarations up front, then the
// data is appended tensor by tensor in any number of pieces, so no tensor need be in memory whole.
// The file is written under a temporary name and renamed by finish().
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/atomic_output.h"
#include "formats/dtype.h"

namespace minimax {

struct TensorDecl {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<int64_t> shape;

  uint64_t nbytes() const;
};

// The header bytes (length prefix included) for `decls`, laid out in the given order, padded with
// spaces to a multiple of 8 so the data buffer starts 8-aligned.
std::vector<uint8_t> build_safetensors_header(const std::vector<TensorDecl>& decls,
                                              const std::map<std::string, std::string>& metadata);

class SafetensorsWriter {
 public:
  // Data must then be written in the order of order(): tensors sorted by descending element
  // alignment (so every tensor is naturally aligned in the file), ties kept in declaration order.
  SafetensorsWriter(const std::string& path, std::vector<TensorDecl> decls,
                    const std::map<std::string, std::string>& metadata = {});

  const std::vector<TensorDecl>& order() const { return decls_; }
  // Name of the tensor the next write() continues; empty when all data has been written.
  std::string current_tensor() const;
  // Appends bytes of the current tensor; a piece may not cross into the next tensor.
  void write(std::span<const uint8_t> bytes);
  // Writes one whole tensor, which must be the current one.
  void write_tensor(const std::string& name, std::span<const uint8_t> bytes);
  // Checks every byte was written, then renames the file into place.
  void finish();
  uint64_t file_size() const { return file_.bytes_written(); }

 private:
  std::vector<TensorDecl> decls_;
  AtomicFile file_;
  size_t current_ = 0;
  uint64_t current_written_ = 0;
};

// model.safetensors.index.json for a sharded checkpoint: weight_map name → shard file name and
// metadata.total_size = sum of tensor data bytes (as huggingface_hub writes it). Written
// atomically.
void write_safetensors_index(const std::string& path,
                             const std::map<std::string, std::string>& weight_map,
                             uint64_t total_size);

// "model-00001-of-00003.safetensors" (1-based, the Hugging Face convention).
std::string shard_file_name(int index, int count);

// Splits `decls` (in order) into shards of at most `max_shard_bytes` data each (a tensor larger
// than the limit gets a shard of its own), closing a shard early once it holds 1/min_shards of the
// data so that small checkpoints still get min_shards shards.
std::vector<std::vector<TensorDecl>> plan_shards(const std::vector<TensorDecl>& decls,
                                                 uint64_t max_shard_bytes, int min_shards = 1);

}  // namespace minimax
