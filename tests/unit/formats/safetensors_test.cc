// safetensors reader and writer: round trips over every dtype, layout rules, atomic output, and
// sharded checkpoints through the index file.
#include "formats/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "base/atomic_output.h"
#include "base/error.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"
#include "scratch_dir.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Safetensors, EveryDtypeRoundTrips) {
  ScratchDir dir("minimax_st");
  std::vector<TensorDecl> decls;
  for (int d = 0; d <= static_cast<int>(DType::kU64); ++d) {
    DType dtype = static_cast<DType>(d);
    // 48 elements fill whole bytes for every bit size (4, 6, 8 … 64).
    decls.push_back({"t_" + std::string(dtype_name(dtype)), dtype, {4, 12}});
  }
  const std::string path = dir.file("all.safetensors");
  SafetensorsWriter writer(path, decls, {{"format", "pt"}});
  std::map<std::string, std::vector<uint8_t>> written;
  uint8_t seed = 1;
  for (const TensorDecl& d : writer.order()) {
    written[d.name] = pattern(d.nbytes(), seed++);
    writer.write_tensor(d.name, written[d.name]);
  }
  EXPECT_FALSE(fs::exists(path)) << "visible before finish";
  writer.finish();
  ASSERT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  SafetensorsFile file(path);
  EXPECT_EQ(file.tensors().size(), decls.size());
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.data_offset() % 8, 0u);
  for (const TensorDecl& d : decls) {
    const TensorInfo& info = file.at(d.name);
    EXPECT_EQ(info.dtype, d.dtype) << d.name;
    EXPECT_EQ(info.shape, d.shape) << d.name;
    auto bytes = file.data(info);
    EXPECT_TRUE(
        std::equal(bytes.begin(), bytes.end(), written[d.name].begin(), written[d.name].end()))
        << d.name;
    // Sorted by descending alignment, every tensor sits at a multiple of its element size.
    EXPECT_EQ((file.data_offset() + info.begin) % dtype_alignment(d.dtype), 0u) << d.name;
  }
}

TEST(Safetensors, ScalarsAndEmptyTensors) {
  ScratchDir dir("minimax_st");
  const std::string path = dir.file("s.safetensors");
  SafetensorsWriter writer(path, {{"scalar", DType::kF32, {}}, {"empty", DType::kBF16, {0, 5}}});
  float one = 1.0f;
  writer.write_tensor("scalar", {reinterpret_cast<uint8_t*>(&one), 4});
  EXPECT_EQ(writer.current_tensor(), "");
  writer.finish();
  SafetensorsFile file(path);
  EXPECT_EQ(file.at("scalar").numel(), 1u);
  EXPECT_EQ(file.at("scalar").nbytes(), 4u);
  EXPECT_EQ(file.at("empty").nbytes(), 0u);
  float back;
  std::memcpy(&back, file.data(file.at("scalar")).data(), 4);
  EXPECT_EQ(back, 1.0f);
}

TEST(Safetensors, StreamingWritesInPieces) {
  ScratchDir dir("minimax_st");
  const std::string path = dir.file("p.safetensors");
  SafetensorsWriter writer(path, {{"a", DType::kU8, {1000}}, {"b", DType::kU8, {3}}});
  auto a = pattern(1000, 3);
  for (size_t i = 0; i < 1000; i += 100) writer.write({a.data() + i, 100});
  EXPECT_EQ(writer.current_tensor(), "b");
  auto b = pattern(3, 9);
  // A piece may not run over into the next tensor's bytes.
  std::vector<uint8_t> too_long(4);
  EXPECT_NE(error_of([&] { writer.write(too_long); }).find("crosses the end of tensor 'b'"),
            std::string::npos);
  writer.write(b);
  writer.finish();
  SafetensorsFile file(path);
  auto got = file.data(file.at("a"));
  EXPECT_TRUE(std::equal(got.begin(), got.end(), a.begin()));
}

TEST(Safetensors, UnfinishedWriterLeavesNoFile) {
  ScratchDir dir("minimax_st");
  const std::string path = dir.file("x.safetensors");
  {
    SafetensorsWriter writer(path, {{"a", DType::kU8, {10}}});
    writer.write(pattern(5, 0));
    EXPECT_NE(error_of([&] { writer.finish(); }).find("tensor 'a' incomplete"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Safetensors, HeaderIsPaddedWithSpacesToEightBytes) {
  for (int len = 1; len < 20; ++len) {
    auto header = build_safetensors_header({{std::string(len, 'n'), DType::kU8, {1}}}, {});
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | header[i];
    EXPECT_EQ(n % 8, 0u);
    EXPECT_EQ(header.size(), 8 + n);
    EXPECT_EQ(header[8], '{');
    EXPECT_TRUE(header.back() == ' ' || header.back() == '}');
  }
}

TEST(Safetensors, MissingTensorNamesFileAndTensor) {
  ScratchDir dir("minimax_st");
  const std::string path = dir.file("m.safetensors");
  SafetensorsWriter writer(path, {{"a", DType::kU8, {1}}});
  writer.write(pattern(1, 0));
  writer.finish();
  SafetensorsFile file(path);
  EXPECT_EQ(error_of([&] { file.at("nope"); }), path + ": tensor 'nope' not found");
}

TEST(Safetensors, WriterRejectsDuplicateNames) {
  EXPECT_NE(error_of([] {
              build_safetensors_header({{"a", DType::kU8, {1}}, {"a", DType::kU8, {1}}}, {});
            }).find("declared twice"),
            std::string::npos);
}

void write_shards(const ScratchDir& dir, int count) {
  std::vector<TensorDecl> decls;
  for (int i = 0; i < 10; ++i) decls.push_back({"w." + std::to_string(i), DType::kF32, {i + 1, 3}});
  auto shards = plan_shards(decls, 1 << 20, count);
  ASSERT_EQ(shards.size(), static_cast<size_t>(count));
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string name = shard_file_name(s + 1, shards.size());
    SafetensorsWriter writer(dir.file(name), shards[s]);
    for (const TensorDecl& d : writer.order()) {
      writer.write_tensor(d.name, pattern(d.nbytes(), d.name.back()));
      weight_map[d.name] = name;
      total += d.nbytes();
    }
    writer.finish();
  }
  write_safetensors_index(dir.file("model.safetensors.index.json"), weight_map, total);
}

TEST(TensorStore, ReadsShardsThroughTheIndex) {
  ScratchDir dir("minimax_st");
  write_shards(dir, 3);
  TensorStore store(dir.str());
  EXPECT_TRUE(store.sharded());
  EXPECT_EQ(store.num_shards(), 3u);
  EXPECT_EQ(store.size(), 10u);
  EXPECT_EQ(store.shard_names()[0], "model-00001-of-00003.safetensors");
  TensorRef ref = store.at("w.7");
  EXPECT_EQ(ref.info->shape, (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(ref.data()[0], static_cast<uint8_t>('7'));
  EXPECT_NE(error_of([&] { store.at("w.99"); }).find("tensor 'w.99' not found"), std::string::npos);
  auto index = nlohmann::json::parse(read_file(dir.file("model.safetensors.index.json")));
  EXPECT_EQ(index["metadata"]["total_size"].get<uint64_t>(), store.total_bytes());
}

TEST(TensorStore, IndexPointingAtTheWrongShardIsAnError) {
  ScratchDir dir("minimax_st");
  write_shards(dir, 2);
  auto index = nlohmann::json::parse(read_file(dir.file("model.safetensors.index.json")));
  index["weight_map"]["w.0"] = "model-00002-of-00002.safetensors";
  write_file_atomic(dir.file("model.safetensors.index.json"), index.dump());
  EXPECT_NE(
      error_of([&] { TensorStore store(dir.str()); })
          .find("tensor 'w.0' is in model-00001-of-00002.safetensors but the index maps it to "
                "model-00002-of-00002.safetensors"),
      std::string::npos);
}

TEST(TensorStore, MissingShardAndUnlistedTensorAreErrors) {
  ScratchDir dir("minimax_st");
  write_shards(dir, 2);
  auto index = nlohmann::json::parse(read_file(dir.file("model.safetensors.index.json")));
  auto original = index;
  index["weight_map"].erase("w.9");
  write_file_atomic(dir.file("model.safetensors.index.json"), index.dump());
  EXPECT_NE(error_of([&] { TensorStore store(dir.str()); }).find("tensor 'w.9' is not listed"),
            std::string::npos);
  original["weight_map"]["w.extra"] = "model-00009-of-00009.safetensors";
  write_file_atomic(dir.file("model.safetensors.index.json"), original.dump());
  EXPECT_NE(error_of([&] {
              TensorStore store(dir.str());
            }).find("shard 'model-00009-of-00009.safetensors' listed in the index does not exist"),
            std::string::npos);
}

TEST(TensorStore, EmptyDirectoryIsAnError) {
  ScratchDir dir("minimax_st");
  EXPECT_NE(error_of([&] { TensorStore store(dir.str()); }).find("no model.safetensors"),
            std::string::npos);
}

}  // namespace
}  // namespace minimax
