// Streaming safetensors writer and the shard index file.
#include "formats/safetensors_writer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "formats/safetensors.h"

namespace minimax {

uint64_t TensorDecl::nbytes() const {
  uint64_t elements = 1;
  for (int64_t d : shape) elements *= static_cast<uint64_t>(d);
  return elements * dtype_bits(dtype) / 8;
}

std::vector<uint8_t> build_safetensors_header(const std::vector<TensorDecl>& decls,
                                              const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorDecl& d : decls) {
    if (header.contains(d.name)) fail("safetensors writer: tensor '{}' declared twice", d.name);
    if (d.shape.size() && (d.shape.back() * dtype_bits(d.dtype)) % 8 != 0) {
      fail("safetensors writer: tensor '{}' does not fill whole bytes", d.name);
    }
    uint64_t bytes = d.nbytes();
    header[d.name] = {{"dtype", std::string(dtype_name(d.dtype))},
                      {"shape", d.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');
  std::vector<uint8_t> out(8 + text.size());
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::copy(text.begin(), text.end(), out.begin() + 8);
  return out;
}

SafetensorsWriter::SafetensorsWriter(const std::string& path, std::vector<TensorDecl> decls,
                                     const std::map<std::string, std::string>& metadata)
    : decls_(std::move(decls)), file_(path) {
  std::stable_sort(decls_.begin(), decls_.end(), [](const TensorDecl& a, const TensorDecl& b) {
    return dtype_alignment(a.dtype) > dtype_alignment(b.dtype);
  });
  file_.write(build_safetensors_header(decls_, metadata));
  while (current_ < decls_.size() && decls_[current_].nbytes() == 0) ++current_;
}

std::string SafetensorsWriter::current_tensor() const {
  return current_ < decls_.size() ? decls_[current_].name : std::string();
}

void SafetensorsWriter::write(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    if (current_ >= decls_.size()) {
      fail("{}: {} bytes written past the last tensor", file_.final_path(), bytes.size());
    }
    const uint64_t need = decls_[current_].nbytes() - current_written_;
    if (bytes.size() > need) {
      fail("{}: a write of {} bytes crosses the end of tensor '{}' ({} bytes left)",
           file_.final_path(), bytes.size(), decls_[current_].name, need);
    }
    file_.write(bytes);
    current_written_ += bytes.size();
    bytes = {};
    if (current_written_ == decls_[current_].nbytes()) {
      current_written_ = 0;
      ++current_;
      while (current_ < decls_.size() && decls_[current_].nbytes() == 0) ++current_;
    }
  }
}

void SafetensorsWriter::write_tensor(const std::string& name, std::span<const uint8_t> bytes) {
  if (current_ >= decls_.size() || decls_[current_].name != name || current_written_ != 0) {
    fail("{}: tensor '{}' written out of order (expected '{}')", file_.final_path(), name,
         current_tensor());
  }
  if (bytes.size() != decls_[current_].nbytes()) {
    fail("{}: tensor '{}' has {} bytes, declared {}", file_.final_path(), name, bytes.size(),
         decls_[current_].nbytes());
  }
  write(bytes);
}

void SafetensorsWriter::finish() {
  if (current_ < decls_.size()) {
    fail("{}: tensor '{}' incomplete at finish", file_.final_path(), decls_[current_].name);
  }
  file_.commit();
}

void write_safetensors_index(const std::string& path,
                             const std::map<std::string, std::string>& weight_map,
                             uint64_t total_size) {
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total_size}};
  index["weight_map"] = weight_map;
  write_file_atomic(path, index.dump(2) + "\n");
}

std::string shard_file_name(int index, int count) {
  return fmt::format("model-{:05d}-of-{:05d}.safetensors", index, count);
}

std::vector<std::vector<TensorDecl>> plan_shards(const std::vector<TensorDecl>& decls,
                                                 uint64_t max_shard_bytes, int min_shards) {
  uint64_t total = 0;
  for (const auto& d : decls) total += d.nbytes();
  // A shard closes when the next tensor would overflow it, or once it holds its fair share of a
  // split into min_shards.
  const uint64_t fair_share = min_shards > 1 ? (total + min_shards - 1) / min_shards : UINT64_MAX;
  std::vector<std::vector<TensorDecl>> shards(1);
  uint64_t in_shard = 0;
  for (const auto& d : decls) {
    const bool overflow = in_shard + d.nbytes() > max_shard_bytes;
    const bool share_done =
        in_shard >= fair_share && shards.size() < static_cast<size_t>(min_shards);
    if (!shards.back().empty() && (overflow || share_done)) {
      shards.emplace_back();
      in_shard = 0;
    }
    shards.back().push_back(d);
    in_shard += d.nbytes();
  }
  return shards;
}

}  // namespace minimax
