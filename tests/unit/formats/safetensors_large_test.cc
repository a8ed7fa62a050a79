// Sizes of the released checkpoints without their gigabytes: a sparse safetensors file whose last
// tensor starts past 2^31 bytes (the M3 embedding alone is 2.46 GB), and an index over 130 shards
// (the order of a release's shard count).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/error.h"
#include "formats/safetensors.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"
#include "scratch_dir.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kPast2GiB = (uint64_t{1} << 31) + 4096;

// Writes `header` and then `tail` at data offset `tail_at` into a sparse file of `file_size`
// bytes: only the written pages take disk space. False when the filesystem refuses.
bool write_sparse(const std::string& path, const std::vector<uint8_t>& header, uint64_t tail_at,
                  const std::vector<uint8_t>& tail, uint64_t file_size) {
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) return false;
  bool ok = ::ftruncate(fd, static_cast<off_t>(file_size)) == 0 &&
            ::pwrite(fd, header.data(), header.size(), 0) == ssize_t(header.size()) &&
            ::pwrite(fd, tail.data(), tail.size(), static_cast<off_t>(header.size() + tail_at)) ==
                ssize_t(tail.size());
  ::close(fd);
  return ok;
}

TEST(SafetensorsLarge, TensorPast2GiBIsMappedAndReadAtItsOffset) {
  ScratchDir dir("minimax_st_large");
  const std::vector<TensorDecl> decls = {{"big", DType::kU8, {int64_t(kPast2GiB)}},
                                         {"tail", DType::kBF16, {3, 5}}};
  const auto header = build_safetensors_header(decls, {});
  std::vector<uint8_t> tail(30);
  for (size_t i = 0; i < tail.size(); ++i) tail[i] = static_cast<uint8_t>(200 - i);
  const std::string path = dir.file("model.safetensors");
  if (!write_sparse(path, header, kPast2GiB, tail, header.size() + kPast2GiB + tail.size()))
    GTEST_SKIP() << "no sparse files of 2 GiB here";

  const TensorStore store(dir.str());
  const TensorRef ref = store.at("tail");
  EXPECT_EQ(ref.info->begin, kPast2GiB);
  EXPECT_EQ(ref.info->shape, (std::vector<int64_t>{3, 5}));
  const auto bytes = ref.data();
  ASSERT_EQ(bytes.size(), tail.size());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), tail.begin()));
  // The big tensor's view spans all of it; its last byte (a hole) reads as zero.
  const auto big = store.at("big").data();
  EXPECT_EQ(big.size(), kPast2GiB);
  EXPECT_EQ(big[big.size() - 1], 0);
  EXPECT_EQ(big.data() + big.size(), bytes.data());
  EXPECT_EQ(store.total_bytes(), kPast2GiB + tail.size());
}

TEST(SafetensorsLarge, OneByteShortOfAHugeDeclarationIsRefused) {
  ScratchDir dir("minimax_st_large_short");
  const std::vector<TensorDecl> decls = {{"big", DType::kBF16, {int64_t(kPast2GiB)}}};
  const auto header = build_safetensors_header(decls, {});
  const std::string path = dir.file("model.safetensors");
  // Two bytes per element are declared; the file holds one byte less.
  if (!write_sparse(path, header, 0, {1}, header.size() + 2 * kPast2GiB - 1))
    GTEST_SKIP() << "no sparse files of 4 GiB here";
  try {
    SafetensorsFile file(path);
    FAIL() << "a truncated 4 GiB tensor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated or trailing data"), std::string::npos)
        << e.what();
  }
}

// A shard written plainly (no fsync: 130 of those would cost seconds), as SafetensorsWriter lays
// it out.
void write_plain_shard(const std::string& path, const std::vector<TensorDecl>& decls,
                       uint8_t fill) {
  std::ofstream out(path, std::ios::binary);
  const auto header = build_safetensors_header(decls, {});
  out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
  for (const TensorDecl& d : decls) out << std::string(d.nbytes(), char(fill));
}

TEST(SafetensorsLarge, IndexOf130ShardsLoads) {
  ScratchDir dir("minimax_st_130");
  constexpr int kShards = 130;
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  for (int s = 0; s < kShards; ++s) {
    const std::string shard = shard_file_name(s + 1, kShards);
    const std::vector<TensorDecl> decls = {
        {fmt::format("model.layers.{}.b", s), DType::kF32, {2}},
        {fmt::format("model.layers.{}.w", s), DType::kU8, {s % 7 + 1}}};
    write_plain_shard(dir.file(shard), decls, static_cast<uint8_t>(s));
    for (const TensorDecl& d : decls) {
      weight_map[d.name] = shard;
      total += d.nbytes();
    }
  }
  write_safetensors_index(dir.file("model.safetensors.index.json"), weight_map, total);

  const TensorStore store(dir.str());
  EXPECT_EQ(store.num_shards(), size_t{kShards});
  EXPECT_EQ(store.size(), size_t{2 * kShards});
  EXPECT_EQ(store.total_bytes(), total);
  for (int s = 0; s < kShards; ++s) {
    const TensorRef w = store.at(fmt::format("model.layers.{}.w", s));
    EXPECT_EQ(w.file->path(), dir.file(shard_file_name(s + 1, kShards)));
    ASSERT_EQ(w.data().size(), size_t(s % 7 + 1));
    EXPECT_EQ(w.data()[0], s);
  }
  // A shard the index names but the directory lacks is named in the error.
  fs::remove(dir.file(shard_file_name(77, kShards)));
  try {
    TensorStore broken(dir.str());
    FAIL() << "a missing shard was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model-00077-of-00130.safetensors"), std::string::npos);
  }
}

}  // namespace
}  // namespace minimax
