// What the released sizes reach that tiny shapes do not, checked with small files: embedding and
// lm_head rows past 2^31 bytes (the M3 table is 200064 x 6144 BF16, 2.46 GB) read through the
// loader and both backends from a sparse file; a checkpoint split over 130 shards computes what
// the two-shard one does; and random checkpoints of `make-tiny --hf-config` run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "base/thread_pool.h"
#include "checkpoint/hf_config_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "formats/float_formats.h"
#include "formats/safetensors_writer.h"
#include "model/model.h"
#include "model/weight_loader.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;
using testing_support::iota_positions;
using testing_support::scratch_path;

constexpr int64_t kVocab = 200064, kHidden = 6144;  // the M3 embedding
// The row whose bytes straddle 2^31 (2^31 / (6144 * 2) = 174762.67), and the last row.
constexpr int64_t kStraddling = 174762, kLast = kVocab - 1;

float value_at(int64_t row, int64_t col) {  // exact in bf16
  return static_cast<float>((row + col) % 97 - 48) / 8.0f;
}

std::vector<uint8_t> bf16_row(int64_t row) {
  std::vector<uint8_t> out(kHidden * 2);
  for (int64_t c = 0; c < kHidden; ++c) {
    const uint16_t b = f32_to_bf16(value_at(row, c));
    std::memcpy(out.data() + 2 * c, &b, 2);
  }
  return out;
}

TEST(RealScale, EmbeddingAndLmHeadRowsPast2GiB) {
  const std::string dir = scratch_path("embedding_2gib");
  fs::create_directories(dir);
  const std::string name = "language_model.model.embed_tokens.weight";
  const auto header = build_safetensors_header({{name, DType::kBF16, {kVocab, kHidden}}}, {});
  const uint64_t row_bytes = kHidden * 2, file = header.size() + kVocab * row_bytes;
  const int fd = ::open((dir + "/model.safetensors").c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  bool ok = ::ftruncate(fd, static_cast<off_t>(file)) == 0 &&
            ::pwrite(fd, header.data(), header.size(), 0) == ssize_t(header.size());
  for (int64_t row : {kStraddling, kLast}) {
    const auto bytes = bf16_row(row);
    ok = ok && ::pwrite(fd, bytes.data(), bytes.size(),
                        static_cast<off_t>(header.size() + row * row_bytes)) == ssize_t(row_bytes);
  }
  ::close(fd);
  if (!ok) GTEST_SKIP() << "no sparse files of 2.5 GB here";

  const TensorStore store(dir);
  std::vector<std::vector<uint8_t>> owned;
  const QuantConfig none;
  WeightLoader loader(store, none, &owned);
  TensorSpec spec;
  spec.name = name;
  spec.role = TensorRole::kEmbedding;
  spec.shape = {kVocab, kHidden};
  const WeightView table = loader.matrix(spec);
  ASSERT_EQ(table.format, WeightFormat::kBF16);
  EXPECT_TRUE(owned.empty());  // in place: nothing copied

  const int32_t tokens[3] = {int32_t(kLast), int32_t(kStraddling), 5};
  for (BackendKind kind : {BackendKind::kReference, BackendKind::kCpu}) {
    SCOPED_TRACE(kind == BackendKind::kCpu ? "cpu" : "reference");
    const KernelOps& ops = kernel_ops(kind);
    std::vector<float> rows(3 * kHidden);
    ops.embedding(table, tokens, 3, rows.data());
    for (int64_t c = 0; c < kHidden; ++c) {
      ASSERT_EQ(rows[c], value_at(kLast, c)) << c;
      ASSERT_EQ(rows[kHidden + c], value_at(kStraddling, c)) << c;
      ASSERT_EQ(rows[2 * kHidden + c], 0.0f) << c;  // a hole of the sparse file
    }
    // As lm_head: row slices around the rows past 2^31 (a whole pass would page in 2.5 GB of
    // holes), column 7 picked out by a one-hot input.
    std::vector<float> x(kHidden, 0.0f), y(2);
    x[7] = 1.0f;
    ops.linear(slice_rows(table, kStraddling - 1, 2, "lm_head"), x.data(), 1, y.data(), nullptr);
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_EQ(y[1], value_at(kStraddling, 7));
    ops.linear(slice_rows(table, kLast - 1, 2, "lm_head"), x.data(), 1, y.data(), nullptr);
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_EQ(y[1], value_at(kLast, 7));
  }
  fs::remove_all(dir);
}

std::vector<float> logits_of(const std::string& dir, const std::vector<int32_t>& tokens) {
  ModelOptions options;
  options.threads = 2;
  auto model = Model::load(dir, options);
  KvCache cache = model->new_cache(static_cast<int64_t>(tokens.size()));
  return model->forward(tokens, iota_positions(tokens.size()), cache, LogitsFor::kAllTokens);
}

// Copies the checkpoint in `from` into `to` with its tensors dealt round-robin over `shards`
// files (written plainly: an fsync per file would cost seconds) and a matching index.
void reshard(const std::string& from, const std::string& to, int shards) {
  const TensorStore store(from);
  std::vector<std::vector<TensorDecl>> decls(shards);
  const std::vector<std::string> names = store.names();
  for (size_t i = 0; i < names.size(); ++i) {
    const TensorInfo& info = *store.at(names[i]).info;
    decls[i % shards].push_back({info.name, info.dtype, info.shape});
  }
  std::map<std::string, std::string> weight_map;
  for (int s = 0; s < shards; ++s) {
    const std::string file = shard_file_name(s + 1, shards);
    std::ofstream out(to + "/" + file, std::ios::binary);
    const auto header = build_safetensors_header(decls[s], {});
    out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
    for (const TensorDecl& d : decls[s]) {
      const auto bytes = store.at(d.name).data();
      out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
      weight_map[d.name] = file;
    }
  }
  write_safetensors_index(to + "/model.safetensors.index.json", weight_map, store.total_bytes());
  fs::copy_file(from + "/config.json", to + "/config.json");
}

TEST(RealScale, A130ShardCheckpointComputesWhatTheTwoShardOneDoes) {
  const std::string two = testing_support::tiny_checkpoint(Arch::kM2, QuantScheme::kNone, 9, 256);
  const std::string many = scratch_path("many_shards");
  fs::create_directories(many);
  reshard(two, many, 130);
  EXPECT_EQ(TensorStore(two).num_shards(), 2u);
  EXPECT_EQ(TensorStore(many).num_shards(), 130u);
  const std::vector<int32_t> tokens = {3, 17, 200, 5, 99, 42};
  EXPECT_EQ(logits_of(two, tokens), logits_of(many, tokens));
  fs::remove_all(many);
}

TEST(RealScale, RandomCheckpointsRunInTheReleasedLayouts) {
  // The tiny M3 as make-tiny --hf-config would write it: MSA past 64 tokens, dense and MoE layers,
  // in the two layouts of the real-width runs (the names and values of all five are checked in
  // tests/unit/checkpoint/hf_config_checkpoint_test.cc).
  std::vector<int32_t> tokens(80);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>(i * 37 % 256);
  for (QuantScheme scheme : {QuantScheme::kFp8Block, QuantScheme::kMxfp4}) {
    SCOPED_TRACE(std::string(quant_scheme_name(scheme)));
    const std::string dir = scratch_path("random_m3");
    fs::create_directories(dir);
    ThreadPool pool(2);
    write_random_checkpoint(
        hf_config_for_scheme(tiny_config_json(Arch::kM3, 256), scheme, "tiny m3"), dir, 4,
        kPublishedShardBytes, pool);
    const std::vector<float> logits = logits_of(dir, tokens);
    ASSERT_EQ(logits.size(), tokens.size() * 256);
    double spread = 0;
    for (float v : logits) {
      ASSERT_TRUE(std::isfinite(v));
      spread = std::max(spread, std::fabs(double(v) - logits[0]));
    }
    EXPECT_GT(spread, 1e-3);  // the weights are not all zero
    fs::remove_all(dir);
  }
}

}  // namespace
}  // namespace minimax
