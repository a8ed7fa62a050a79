// ConvertManifest: the resume record of `minimax convert` (source fingerprint, hashed shards).
#include "checkpoint/convert_manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/log.h"
#include "checkpoint/model_config.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "minimax convert resume manifest";
constexpr int kVersion = 1;

// Odd constants: each lane step below is then a bijection of the lane for a fixed input word, so
// no earlier byte's effect can be cancelled by the bytes after it, and zero runs keep stirring.
constexpr uint64_t kMul = 0x8de57bcaf1429137ull;
constexpr uint64_t kAdd = 0xc99c08b9bcba73e7ull;
constexpr uint64_t kSeed = 0x9260eacc1705621dull;
constexpr uint64_t kFinal = 0xa1215dbb384b428full;

uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t avalanche(uint64_t x) {
  x ^= x >> 31;
  x *= kFinal;
  x ^= x >> 29;
  x *= kMul;
  x ^= x >> 32;
  return x;
}

// Four independent lanes over 32-byte blocks, so that the multiplies overlap: the hash keeps up
// with reading a shard from the page cache.
class ContentHash {
 public:
  void update(const uint8_t* p, size_t n) {
    length_ += n;
    while (n > 0) {
      const size_t take = std::min(n, sizeof block_ - filled_);
      std::memcpy(block_ + filled_, p, take);
      filled_ += take;
      p += take;
      n -= take;
      if (filled_ == sizeof block_) {
        absorb(block_);
        filled_ = 0;
      }
    }
  }
  uint64_t finish() {
    if (filled_ > 0) {
      std::memset(block_ + filled_, 0, sizeof block_ - filled_);
      absorb(block_);
    }
    uint64_t h = avalanche(length_ ^ kSeed);
    for (uint64_t lane : lanes_) h = rotl((h ^ avalanche(lane)) * kMul, 29) + kAdd;
    return avalanche(h);
  }

 private:
  void absorb(const uint8_t* block) {
    for (int i = 0; i < 4; ++i) {
      uint64_t word;
      std::memcpy(&word, block + 8 * i, 8);
      lanes_[i] = (rotl(lanes_[i], 23) ^ word) * kMul + kAdd;
    }
  }

  uint64_t lanes_[4] = {kSeed, kSeed ^ kMul, kSeed ^ kAdd, kSeed ^ kFinal};
  uint8_t block_[32];
  size_t filled_ = 0;
  uint64_t length_ = 0;
};

std::string hex(uint64_t value) { return fmt::format("{:016x}", value); }

ShardRecord parse_record(const nlohmann::json& j) {
  const std::string text = j.at("hash").get<std::string>();
  if (text.size() != 16 || text.find_first_not_of("0123456789abcdef") != std::string::npos)
    fail("hash '{}' is not 16 hex digits", text);
  return {j.at("size").get<uint64_t>(), std::stoull(text, nullptr, 16)};
}

}  // namespace

ShardRecord hash_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  ContentHash hash;
  const size_t kBuffer = size_t{1} << 20;
  const auto buffer = std::make_unique<uint8_t[]>(kBuffer);
  for (;;) {
    const ssize_t n = ::read(fd, buffer.get(), kBuffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      fail("{}: read failed: {}", path, std::strerror(err));
    }
    if (n == 0) break;
    hash.update(buffer.get(), static_cast<size_t>(n));
  }
  ::close(fd);
  ShardRecord record;
  record.hash = hash.finish();
  record.size = fs::file_size(path);
  return record;
}

nlohmann::json source_fingerprint(const std::string& input_dir, const std::string& target) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& entry : fs::directory_iterator(input_dir)) {
    const std::string name = entry.path().filename().string();
    const std::string path = entry.path().string();
    if (name == "config.json" || name == "model.safetensors.index.json") {
      const ShardRecord r = hash_file(path);
      files[name] = {{"size", r.size}, {"hash", hex(r.hash)}};
    } else if (entry.path().extension() == ".safetensors") {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) fail("{}: cannot stat: {}", path, std::strerror(errno));
      const int64_t mtime_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
      files[name] = {{"size", static_cast<uint64_t>(st.st_size)}, {"mtime_ns", mtime_ns}};
    }
  }
  return {{"target", target}, {"files", files}};
}

std::optional<std::string> fingerprint_difference(const nlohmann::json& recorded,
                                                  const nlohmann::json& current) {
  if (recorded == current) return std::nullopt;
  if (recorded.value("target", "") != current.value("target", ""))
    return fmt::format("target {} != {}", recorded.value("target", "?"),
                       current.value("target", "?"));
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& was = recorded.contains("files") ? recorded["files"] : none;
  const nlohmann::json& now = current.contains("files") ? current["files"] : none;
  for (const auto& [name, entry] : was.items()) {
    if (!now.contains(name)) return name + ": no longer in the source";
    if (entry != now[name])
      return fmt::format("{}: {} then, {} now", name, entry.dump(), now[name].dump());
  }
  for (const auto& [name, entry] : now.items())
    if (!was.contains(name)) return name + ": new in the source";
  return "the fingerprints differ";
}

std::optional<ConvertManifest> ConvertManifest::load(const std::string& dir) {
  ConvertManifest manifest(dir, nlohmann::json());
  const std::string path = manifest.path();
  if (!fs::exists(path)) return std::nullopt;
  const nlohmann::json j = read_json_file(path);
  try {
    if (!j.is_object() || j.value("manifest", "") != kFormat || j.value("version", 0) != kVersion)
      fail("not a version {} {}", kVersion, kFormat);
    manifest.fingerprint_ = j.at("source");
    for (const auto& [name, record] : j.at("shards").items())
      manifest.shards_[name] = parse_record(record);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed resume manifest: {}", path, e.what());
  } catch (const Error& e) {
    fail("{}: malformed resume manifest: {}", path, e.what());
  }
  return manifest;
}

const ShardRecord* ConvertManifest::find(const std::string& name) const {
  auto it = shards_.find(name);
  return it == shards_.end() ? nullptr : &it->second;
}

void ConvertManifest::save() const {
  nlohmann::json shards = nlohmann::json::object();
  for (const auto& [name, r] : shards_) shards[name] = {{"size", r.size}, {"hash", hex(r.hash)}};
  const nlohmann::json j = {
      {"manifest", kFormat}, {"version", kVersion}, {"source", fingerprint_}, {"shards", shards}};
  write_file_atomic(path(), j.dump(2) + "\n");
}

size_t remove_entries_except(const std::string& dir, const std::set<std::string>& keep,
                             const std::string& why) {
  std::vector<fs::path> doomed;
  for (const auto& entry : fs::directory_iterator(dir))
    if (!keep.count(entry.path().filename().string())) doomed.push_back(entry.path());
  std::sort(doomed.begin(), doomed.end());
  for (const fs::path& path : doomed) {
    log_warn("{}: {}; removed", path.string(), why);
    std::error_code ec;
    fs::remove_all(path, ec);
    if (ec) fail("{}: cannot remove: {}", path.string(), ec.message());
  }
  return doomed.size();
}

}  // namespace minimax
