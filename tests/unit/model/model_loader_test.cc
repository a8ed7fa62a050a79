// The weight loader (views in the stored format, pointing into the mapping; errors that name the
// tensor), the forward pass's position and token checks, the communicator guard and the .npy
// writer. The architecture lookup is tested in tests/unit/checkpoint/architecture_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "checkpoint/weight_codec.h"
#include "model/model.h"
#include "model/npy.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

using testing_support::golden_checkpoint;
using testing_support::load_golden;

struct Loaded {
  ModelConfig config;
  QuantConfig quant;
  std::unique_ptr<TensorStore> store;
  ModelWeights weights;
};

Loaded load(const std::string& golden, const LoadOptions& options = {}) {
  const std::string dir = golden_checkpoint(load_golden(golden));
  Loaded l{load_model_config(dir), load_quant_config(dir), std::make_unique<TensorStore>(dir), {}};
  l.weights = load_model_weights(*l.store, l.config, l.quant, options);
  return l;
}

std::string expert(const ModelConfig& c, int layer, int e, const char* w) {
  return fmt::format("{}layers.{}.block_sparse_moe.experts.{}.{}.weight", c.tensor_prefix, layer, e,
                     w);
}

TEST(Loader, BlockFp8ViewsPointIntoTheMapping) {
  const Loaded l = load("m2-fp8-block");
  const LayerWeights& layer = l.weights.layers[1];
  EXPECT_EQ(layer.attn.q.format, WeightFormat::kFp8Block);
  EXPECT_EQ(layer.attn.q.block_rows, 128);
  EXPECT_EQ(layer.moe_weights.router.format, WeightFormat::kF32);  // never quantized
  EXPECT_EQ(l.weights.lm_head.format, WeightFormat::kBF16);        // modules_to_not_convert
  const ExpertWeights& e = layer.moe_weights.experts[5];
  EXPECT_EQ(e.down.format, WeightFormat::kFp8Block);
  EXPECT_EQ(e.gate.data, l.store->at(expert(l.config, 1, 5, "w1")).data().data());  // zero copy
  // The view decodes to the values the checkpoint codec decodes (scales read right).
  const std::vector<float> expected = decode_weight(
      *l.store, expert(l.config, 1, 5, "w2"), LinearLayout::kFp8Block, e.down.rows, e.down.cols);
  std::vector<float> x(e.down.cols, 0.0f), y(e.down.rows);
  x[3] = 1.0f;  // picks column 3
  kernel_ops(BackendKind::kReference).linear(e.down, x.data(), 1, y.data(), nullptr);
  for (int64_t r = 0; r < e.down.rows; ++r) EXPECT_EQ(y[r], expected[r * e.down.cols + 3]);
}

TEST(Loader, ChannelFp8QuantizesOnlyRoutedExperts) {
  const Loaded l = load("m3-fp8-channel");
  for (int i = 0; i < l.config.num_layers; ++i) {
    const LayerWeights& layer = l.weights.layers[i];
    EXPECT_EQ(layer.attn.q.format, WeightFormat::kBF16);
    if (!layer.moe) {
      EXPECT_EQ(layer.dense.gate.format, WeightFormat::kBF16);
      continue;
    }
    EXPECT_TRUE(layer.sparse);
    EXPECT_EQ(layer.attn.index_q.format, WeightFormat::kBF16);
    EXPECT_EQ(layer.moe_weights.experts[0].up.format, WeightFormat::kFp8Channel);
    EXPECT_EQ(layer.moe_weights.shared.down.format, WeightFormat::kBF16);
    EXPECT_EQ(layer.attn.index_q_norm.size(), static_cast<size_t>(l.config.sparse.index_dim));
  }
}

TEST(Loader, Fp4LayoutsKeepCodesAndScalesInPlace) {
  const Loaded mx = load("m3-mxfp4");
  const WeightView& w = mx.weights.layers[3].moe_weights.experts[2].gate;
  EXPECT_EQ(w.format, WeightFormat::kMxfp4);
  const std::string w1 = expert(mx.config, 3, 2, "w1");
  const std::string scale_name = w1.substr(0, w1.size() - 6) + "weight_scale";
  EXPECT_EQ(w.scales, mx.store->at(scale_name).data().data());
  const Loaded nv = load("m2-nvfp4");
  const WeightView& n = nv.weights.layers[0].moe_weights.experts[0].down;
  EXPECT_EQ(n.format, WeightFormat::kNvfp4);
  const std::string module = expert(nv.config, 0, 0, "w2");
  const float global =
      read_as_float(nv.store->at(module.substr(0, module.size() - 6) + "weight_scale_2"))[0];
  EXPECT_EQ(n.global_scale, global);
  EXPECT_GT(n.global_scale, 0.0f);
}

// The official MXFP8 release: every Linear MXFP8, codes and e8m0 scales read in place.
TEST(Loader, Mxfp8KeepsCodesAndE8m0ScalesInPlace) {
  const Loaded l = load("m3-mxfp8");
  const LayerWeights& dense = l.weights.layers[0];
  EXPECT_EQ(dense.attn.q.format, WeightFormat::kMxfp8);
  EXPECT_EQ(dense.dense.down.format, WeightFormat::kMxfp8);
  const LayerWeights& moe = l.weights.layers[3];
  EXPECT_EQ(moe.attn.index_k.format, WeightFormat::kMxfp8);
  EXPECT_EQ(moe.moe_weights.shared.up.format, WeightFormat::kMxfp8);
  EXPECT_EQ(moe.moe_weights.router.format, WeightFormat::kF32);  // never quantized
  EXPECT_EQ(l.weights.lm_head.format, WeightFormat::kBF16);      // ignored_layers
  const WeightView& w2 = moe.moe_weights.experts[1].down;
  EXPECT_EQ(w2.format, WeightFormat::kMxfp8);
  const std::string name = expert(l.config, 3, 1, "w2");
  EXPECT_EQ(w2.data, l.store->at(name).data().data());
  EXPECT_EQ(w2.scales,
            l.store->at(name.substr(0, name.size() - 6) + "weight_scale_inv").data().data());
  // The view decodes to the values the checkpoint codec decodes: the dense down projection (128
  // inputs), column 45 of its second e8m0 block.
  const WeightView& down = dense.dense.down;
  ASSERT_GT(down.cols, 45);
  const std::string down_name = l.config.tensor_prefix + "layers.0.mlp.down_proj.weight";
  const std::vector<float> expected =
      decode_weight(*l.store, down_name, LinearLayout::kMxfp8, down.rows, down.cols);
  std::vector<float> x(down.cols, 0.0f), y(down.rows);
  x[45] = 1.0f;
  kernel_ops(BackendKind::kReference).linear(down, x.data(), 1, y.data(), nullptr);
  for (int64_t r = 0; r < down.rows; ++r) EXPECT_EQ(y[r], expected[r * down.cols + 45]);
}

// AMD's Quark MXFP4 with FP8 attention: attention (and the index branch) FP8 per channel, routed
// and shared experts MXFP4, the dense MLPs BF16 (excluded).
TEST(Loader, Mxfp4WithFp8AttentionMixesLayouts) {
  const Loaded l = load("m3-mxfp4-fp8attn");
  const LayerWeights& moe = l.weights.layers[3];
  EXPECT_EQ(moe.attn.q.format, WeightFormat::kFp8Channel);
  EXPECT_EQ(moe.attn.o.format, WeightFormat::kFp8Channel);
  EXPECT_EQ(moe.attn.index_q.format, WeightFormat::kFp8Channel);
  EXPECT_EQ(moe.moe_weights.experts[0].gate.format, WeightFormat::kMxfp4);
  EXPECT_EQ(moe.moe_weights.shared.gate.format, WeightFormat::kMxfp4);
  EXPECT_EQ(l.weights.layers[0].dense.up.format, WeightFormat::kBF16);
  const std::string k = l.config.tensor_prefix + "layers.3.self_attn.k_proj.weight";
  EXPECT_EQ(moe.attn.k.scales,
            l.store->at(k.substr(0, k.size() - 6) + "weight_scale").data().data());
}

TEST(Loader, DequantPathOwnsBf16Experts) {
  LoadOptions options;
  options.dequant_experts = true;
  const Loaded l = load("m3-nvfp4", options);
  const ExpertWeights& e = l.weights.layers[4].moe_weights.experts[7];
  EXPECT_EQ(e.gate.format, WeightFormat::kBF16);
  EXPECT_FALSE(l.weights.owned.empty());
  EXPECT_EQ(l.weights.layers[0].attn.q.format, WeightFormat::kBF16);  // attention untouched
}

std::string copy_with_config(const std::string& golden,
                             const std::function<void(nlohmann::json&)>& edit) {
  const std::string src = golden_checkpoint(load_golden(golden));
  const std::string dst = testing_support::scratch_path("edited");
  std::filesystem::copy(src, dst, std::filesystem::copy_options::recursive);
  nlohmann::json config = read_json_file(dst + "/config.json");
  edit(config);
  std::ofstream(dst + "/config.json") << config.dump(2);
  return dst;
}

using testing_support::expect_error_mentions;

TEST(Loader, WrongLayoutNamesTheTensor) {
  // A BF16 checkpoint whose config claims compressed-tensors FP8.
  const nlohmann::json fp8 =
      read_json_file(golden_checkpoint(load_golden("m2-fp8-channel")) + "/config.json");
  const std::string dir = copy_with_config(
      "m2-bf16", [&](nlohmann::json& c) { c["quantization_config"] = fp8["quantization_config"]; });
  expect_error_mentions([&] { Model::load(dir); },
                        "'model.layers.0.block_sparse_moe.experts.0.w1.weight' is BF16");
}

TEST(Loader, MissingTensorIsNamed) {
  const std::string dir = copy_with_config("m2-bf16", [](nlohmann::json& c) {
    c["num_hidden_layers"] = 4;
    c.erase("attn_type_list");
  });
  expect_error_mentions([&] { Model::load(dir); }, "model.layers.3.");
}

TEST(Forward, RejectsBadPositionsAndTokens) {
  ModelOptions options;
  options.backend = BackendKind::kReference;
  auto model = Model::load(golden_checkpoint(load_golden("m2-bf16")), options);
  KvCache cache = model->new_cache(8);
  const std::vector<int32_t> two = {1, 2};
  expect_error_mentions(
      [&] {
        model->forward(two, std::vector<int32_t>{0, 8}, cache);
      },
      "position 8 is outside the cache of 8 tokens");
  KvCache fresh = model->new_cache(8);
  expect_error_mentions(
      [&] {
        model->forward(two, std::vector<int32_t>{0, 5}, fresh);
      },
      "position 5");
  KvCache other = model->new_cache(8);
  expect_error_mentions([&] { model->forward(two, std::vector<int32_t>{0}, other); },
                        "2 tokens but 1 positions");
  expect_error_mentions(
      [&] { model->forward(std::vector<int32_t>{100000}, std::vector<int32_t>{0}, other); },
      "token id 100000");
}

// Two ranks whose collectives must not be reached: a layout that does not fit is refused first.
class TwoRanks : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  void allreduce_sum(float*, size_t) const override { fail("no collective expected"); }
  void broadcast(void*, size_t, int) const override { fail("no collective expected"); }
  void allgather(const void*, size_t, void*) const override { fail("no collective expected"); }
  void alltoallv(const void*, const size_t*, void*, const size_t*) const override {
    fail("no collective expected");
  }
  [[noreturn]] void abort(std::string_view why) const override { fail("abort: {}", why); }
};

TEST(Forward, ALayoutThatDoesNotFitTheRanksIsRefusedBeforeAnyCollective) {
  TwoRanks comm;
  const std::string dir = golden_checkpoint(load_golden("m2-bf16"));
  expect_error_mentions([&] { Model::load(dir, ModelOptions{}, &comm); },
                        "1 ranks, but 2 were started");
  ModelOptions tp3;
  tp3.parallel.tensor_parallel = 3;
  expect_error_mentions([&] { Model::load(dir, tp3, &comm); }, "3 ranks, but 2 were started");
  ModelOptions tp2;
  tp2.parallel.tensor_parallel = 2;
  tp2.parallel.data_parallel = 2;
  expect_error_mentions([&] { Model::load(dir, tp2, &comm); }, "not supported");
}

TEST(Npy, HeaderShapeAndData) {
  const std::vector<float> values = {1.5f, -2.0f, 0.25f, 3.0f, 4.0f, 5.0f};
  const std::string bytes = npy_f32_bytes(values, {2, 3});
  ASSERT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(bytes[6], 1);
  const size_t header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_EQ(header.back(), '\n');
  ASSERT_EQ(bytes.size(), 10 + header_len + values.size() * 4);
  std::vector<float> back(values.size());
  std::memcpy(back.data(), bytes.data() + 10 + header_len, back.size() * 4);
  EXPECT_EQ(back, values);
  EXPECT_NE(npy_f32_bytes(values, {6}).find("'shape': (6,)"), std::string::npos);
  EXPECT_THROW(npy_f32_bytes(values, {4}), Error);
}

}  // namespace
}  // namespace minimax
