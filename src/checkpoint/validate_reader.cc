// CheckedCheckpoint: read() + nlohmann header parsing and pread() data access, for validate.
#include "checkpoint/validate_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open: {}", path, std::strerror(errno));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

// Reads exactly `length` bytes at `offset`.
void pread_exact(int fd, const std::string& path, uint64_t offset, uint64_t length, uint8_t* out) {
  while (length > 0) {
    const ssize_t n = ::pread(fd, out, length, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("{}: read of {} bytes at offset {} failed", path, length, offset);
    out += n;
    offset += static_cast<uint64_t>(n);
    length -= static_cast<uint64_t>(n);
  }
}

}  // namespace

int checked_dtype_bytes(const std::string& dtype) {
  if (dtype == "U8" || dtype == "I8" || dtype == "BOOL" || dtype == "F8_E4M3" ||
      dtype == "F8_E5M2" || dtype == "F8_E8M0" || dtype == "F8_E4M3FNUZ" || dtype == "F8_E5M2FNUZ")
    return 1;
  if (dtype == "BF16" || dtype == "F16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F64" || dtype == "I64" || dtype == "U64" || dtype == "C64") return 8;
  return 0;
}

uint64_t CheckedTensor::numel() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

CheckedCheckpoint::CheckedCheckpoint(const std::string& dir) : dir_(dir) {
  config_ = read_json(dir + "/config.json");
  const std::string index_path = dir + "/model.safetensors.index.json";
  if (!fs::exists(index_path)) {
    read_shard("model.safetensors");
    return;
  }
  const nlohmann::json index = read_json(index_path);
  if (!index.contains("weight_map") || !index["weight_map"].is_object())
    fail("{}: no weight_map object", index_path);
  std::map<std::string, std::string> placed;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string()) fail("{}: weight_map['{}'] is not a file name", index_path, name);
    const std::string file_name = file.get<std::string>();
    // Only a shard inside this directory belongs to the checkpoint; a path could reach any file.
    if (file_name.find('/') != std::string::npos ||
        fs::path(file_name).extension() != ".safetensors")
      fail("{}: weight_map['{}'] = '{}' is not a .safetensors file of this directory", index_path,
           name, file_name);
    placed[name] = file_name;
  }
  std::map<std::string, bool> shards;
  for (const auto& [name, file] : placed) shards[file] = true;
  for (const auto& [file, unused] : shards) read_shard(file);
  for (const auto& [name, file] : placed) {
    const CheckedTensor* t = find(name);
    if (t == nullptr)
      fail("{}: '{}' is mapped to {} but no shard holds it", index_path, name, file);
    if (t->file != dir_ + "/" + file)
      fail("{}: '{}' is mapped to {} but lies in {}", index_path, name, file, t->file);
  }
  for (const auto& [name, t] : tensors_)
    if (!placed.count(name))
      fail("{}: '{}' in {} is missing from the index", index_path, name, t.file);
}

CheckedCheckpoint::~CheckedCheckpoint() {
  for (const auto& [path, fd] : descriptors_) ::close(fd);
}

void CheckedCheckpoint::read_shard(const std::string& file_name) {
  const std::string path = dir_ + "/" + file_name;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  descriptors_[path] = fd;
  shard_files_.insert(file_name);
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail("{}: cannot stat", path);
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (file_size < 8) fail("{}: {} bytes, shorter than the 8-byte header length", path, file_size);
  uint8_t length_bytes[8];
  pread_exact(fd, path, 0, 8, length_bytes);
  uint64_t header_length = 0;
  for (int i = 0; i < 8; ++i) header_length |= uint64_t{length_bytes[i]} << (8 * i);
  if (header_length > 100'000'000 || 8 + header_length > file_size)
    fail("{}: header length {} does not fit the {}-byte file", path, header_length, file_size);
  std::string text(header_length, '\0');
  pread_exact(fd, path, 8, header_length, reinterpret_cast<uint8_t*>(text.data()));
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: header is not valid JSON: {}", path, e.what());
  }
  if (!header.is_object()) fail("{}: header is not a JSON object", path);
  const uint64_t data_start = 8 + header_length;
  uint64_t data_end = 0;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    CheckedTensor t;
    t.name = name;
    t.file = path;
    try {
      t.dtype = entry.at("dtype").get<std::string>();
      t.shape = entry.at("shape").get<std::vector<int64_t>>();
      const auto offsets = entry.at("data_offsets").get<std::vector<uint64_t>>();
      if (offsets.size() != 2 || offsets[1] < offsets[0]) fail("bad data_offsets");
      t.file_offset = data_start + offsets[0];
      t.nbytes = offsets[1] - offsets[0];
      data_end = std::max(data_end, offsets[1]);
    } catch (const nlohmann::json::exception& e) {
      fail("{}: tensor '{}': malformed entry: {}", path, name, e.what());
    } catch (const Error& e) {
      fail("{}: tensor '{}': {}", path, name, e.what());
    }
    const int bytes = checked_dtype_bytes(t.dtype);
    for (int64_t d : t.shape)
      if (d < 0) fail("{}: tensor '{}': negative dimension", path, name);
    if (bytes == 0)
      fail("{}: tensor '{}': dtype {} is not one validate reads", path, name, t.dtype);
    if (t.numel() * static_cast<uint64_t>(bytes) != t.nbytes)
      fail("{}: tensor '{}': {} bytes for {} elements of {}", path, name, t.nbytes, t.numel(),
           t.dtype);
    if (tensors_.count(name)) fail("{}: tensor '{}' also in {}", path, name, tensors_[name].file);
    tensors_[name] = std::move(t);
  }
  if (data_start + data_end != file_size)
    fail("{}: tensor data ends at byte {} but the file has {}", path, data_start + data_end,
         file_size);
}

const CheckedTensor* CheckedCheckpoint::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

void CheckedCheckpoint::read_into(const CheckedTensor& tensor, uint64_t offset, uint64_t length,
                                  uint8_t* out) const {
  if (offset + length > tensor.nbytes)
    fail("{}: read past the end of tensor '{}'", tensor.file, tensor.name);
  pread_exact(descriptors_.at(tensor.file), tensor.file, tensor.file_offset + offset, length, out);
}

std::vector<uint8_t> CheckedCheckpoint::read(const CheckedTensor& tensor, uint64_t offset,
                                             uint64_t length) const {
  std::vector<uint8_t> out(length);
  read_into(tensor, offset, length, out.data());
  return out;
}

}  // namespace minimax
