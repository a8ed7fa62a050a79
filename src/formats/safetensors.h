// safetensors reader: a memory-mapped file whose header is validated as strictly as the reference
// implementation (huggingface/safetensors, spec/formats.md §7), with zero-copy tensor views.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mapped_file.h"
#include "formats/dtype.h"

namespace minimax {

// The reference reader's limit on the JSON header length.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

struct TensorInfo {
  std::string name;
  DType dtype = DType::kU8;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // offsets relative to the start of the data buffer, end exclusive
  uint64_t end = 0;

  uint64_t numel() const;
  uint64_t nbytes() const { return end - begin; }
};

// The parsed header: tensors sorted by offset, and the optional string→string metadata.
struct SafetensorsHeader {
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // 8 + header length: where the data buffer starts in the file
};

// Parses and validates the header of a complete safetensors file held in `file_bytes`. Every error
// is an Error whose message starts with `path` and names the tensor at fault.
SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> file_bytes,
                                           const std::string& path);

// "[2, 3]" for messages.
std::string shape_string(const std::vector<int64_t>& shape);

class SafetensorsFile {
 public:
  // Maps and validates `path`.
  explicit SafetensorsFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const std::vector<TensorInfo>& tensors() const { return header_.tensors; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  uint64_t data_offset() const { return header_.data_offset; }
  uint64_t file_size() const { return file_.size(); }
  // The whole file as mapped (header included): what base/huge_pages.h may move.
  std::span<const uint8_t> mapping() const { return file_.bytes(); }

  // nullptr when absent.
  const TensorInfo* find(std::string_view name) const;
  // Error "<path>: tensor '<name>' not found" when absent.
  const TensorInfo& at(std::string_view name) const;
  // The tensor's bytes inside the mapping.
  std::span<const uint8_t> data(const TensorInfo& info) const;
  // Drops the tensor's pages from this process's page cache view (for streaming over big files).
  void release(const TensorInfo& info) const;

 private:
  MappedFile file_;
  SafetensorsHeader header_;
  std::unordered_map<std::string_view, size_t> index_;
};

}  // namespace minimax
