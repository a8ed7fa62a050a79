// make-tiny --hf-config: released configs cut to N layers, and random checkpoints streamed in
// every layout (names as the table says, sharded, the same bytes for the same seed whatever the
// thread count, decoded weights with the intended spread).
#include "checkpoint/hf_config_checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/thread_pool.h"
#include "checkpoint/model_config.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/tensor_table.h"
#include "checkpoint/tiny_config.h"
#include "checkpoint/weight_codec.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"
#include "scratch_dir.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json released(const std::string& name) {
  return read_json_file(std::string(MINIMAX_TEST_DATA) + "/configs/" + name + "/config.json");
}

TEST(SliceHfConfig, M3AtFourLayersKeepsThreeDenseAndOneSparseMoeLayer) {
  const json sliced = slice_hf_config(released("m3_mxfp4"), 4, "m3");
  const ModelConfig c = parse_model_config(sliced, "sliced m3");
  EXPECT_EQ(c.num_layers, 4);
  EXPECT_EQ(c.moe_layer, (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(c.sparse.layer_sparse, (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(sliced["text_config"]["sparse_attention_config"]["sparse_disable_index_value"].size(),
            4u);
  // Everything else is the release's.
  EXPECT_EQ(c.hidden_size, 6144);
  EXPECT_EQ(c.vocab_size, 200064);
  EXPECT_EQ(c.num_experts, 128);
  EXPECT_EQ(c.sparse.block_size, 128);
  EXPECT_EQ(c.sparse.topk_blocks, 16);
  EXPECT_EQ(sliced["quantization_config"], released("m3_mxfp4")["quantization_config"]);
}

TEST(SliceHfConfig, M2AtTwoLayers) {
  const json sliced = slice_hf_config(released("m2_fp8"), 2, "m2");
  const ModelConfig c = parse_model_config(sliced, "sliced m2");
  EXPECT_EQ(c.num_layers, 2);
  EXPECT_EQ(sliced["attn_type_list"].size(), 2u);
  EXPECT_EQ(c.hidden_size, 3072);
  EXPECT_EQ(c.num_experts, 256);
  EXPECT_EQ(tensor_table(c).size(), 2 * (256 * 3 + 10) + 3u);  // per layer: experts + 10 others
}

TEST(SliceHfConfig, ErrorsNameTheLayerCountAndTheField) {
  EXPECT_THROW(
      {
        try {
          slice_hf_config(released("m3_mxfp4"), 61, "m3.json");
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("--layers 61 is outside [1, 60]"),
                    std::string::npos);
          throw;
        }
      },
      Error);
  EXPECT_THROW(slice_hf_config(released("m2_fp8"), 0, "m2.json"), Error);
  json bad = released("m3_mxfp4");
  bad["text_config"]["moe_layer_freq"].erase(0);  // 59 entries for 60 layers
  try {
    slice_hf_config(bad, 4, "bad.json");
    FAIL() << "a short per-layer list was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: field 'text_config.moe_layer_freq'"),
              std::string::npos)
        << e.what();
  }
}

TEST(HfConfigForScheme, KeepsTheReleasesOwnConfigAndReplacesAnother) {
  const json m2 = released("m2_fp8");
  EXPECT_EQ(hf_config_for_scheme(m2, QuantScheme::kFp8Block, "m2"), m2);
  const json mx = hf_config_for_scheme(m2, QuantScheme::kMxfp4, "m2");
  EXPECT_EQ(mx["quantization_config"]["quant_method"], "quark");
  EXPECT_EQ(detect_quantization(mx, std::nullopt, "m2").scheme, QuantScheme::kMxfp4);
  EXPECT_FALSE(hf_config_for_scheme(m2, QuantScheme::kNone, "m2").contains("quantization_config"));
}

// The tiny M3 (MSA, dense and MoE layers, shared expert) in `scheme`, sharded every ~40 KB.
json tiny_m3_as(QuantScheme scheme) {
  return hf_config_for_scheme(tiny_config_json(Arch::kM3, 256), scheme, "tiny m3");
}

// Per layout: every stored tensor of the table, sharded, and decoded weights with the spread of
// their role.
TEST(RandomCheckpoint, WritesEveryStoredTensorWithTheSpreadOfItsRole) {
  for (QuantScheme scheme : {QuantScheme::kNone, QuantScheme::kFp8Block, QuantScheme::kFp8Channel,
                             QuantScheme::kMxfp4, QuantScheme::kNvfp4, QuantScheme::kMxfp8}) {
    SCOPED_TRACE(std::string(quant_scheme_name(scheme)));
    ScratchDir dir("minimax_random_ckpt");
    ThreadPool pool(2);
    // Shards of just over half the data: two or three of them (each file costs an fsync).
    const json config = tiny_m3_as(scheme);
    const ModelConfig planned = parse_model_config(config, "tiny m3");
    const QuantConfig planned_quant = detect_quantization(config, std::nullopt, "tiny m3");
    uint64_t bytes = 0;
    for (const TensorSpec& spec : tensor_table(planned))
      for (const StoredTensor& s : stored_tensors(spec, planned_quant))
        bytes += TensorDecl{s.name, s.dtype, s.shape}.nbytes();
    const auto summary = write_random_checkpoint(config, dir.str(), 7, bytes / 2 + 4096, pool);
    EXPECT_GT(summary.shards, 1);
    EXPECT_EQ(summary.tensor_bytes, bytes);
    const ModelConfig model = load_model_config(dir.str());
    const QuantConfig quant = load_quant_config(dir.str());
    EXPECT_EQ(quant.scheme, scheme);
    std::set<std::string> expected;
    for (const TensorSpec& spec : tensor_table(model))
      for (const StoredTensor& s : stored_tensors(spec, quant)) expected.insert(s.name);
    TensorStore store(dir.str());
    EXPECT_EQ(store.num_shards(), static_cast<size_t>(summary.shards));
    const auto names = store.names();
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), expected);
    EXPECT_EQ(store.total_bytes(), summary.tensor_bytes);
    EXPECT_EQ(fs::exists(dir.str() + "/hf_quant_config.json"), scheme == QuantScheme::kNvfp4);

    // A routed expert's down projection [64, 32] and the dense up projection [128, 64] (BF16
    // under MXFP4's exclude list). A tensor this small is one FP8 tile, whose scale varies by
    // up to 25 % from the nominal one, hence the tolerance.
    for (const TensorSpec& spec : tensor_table(model)) {
      if (spec.name.find("experts.2.w2") == std::string::npos &&
          spec.name.find("layers.0.mlp.up_proj") == std::string::npos)
        continue;
      const auto w = decode_weight(store, spec.name, quant.layout_of(module_name(spec.name)),
                                   spec.shape[0], spec.shape[1]);
      double sum = 0, squares = 0;
      for (float v : w) {
        ASSERT_TRUE(std::isfinite(v));
        sum += v;
        squares += double(v) * v;
      }
      const double mean = sum / w.size(), stddev = std::sqrt(squares / w.size() - mean * mean);
      const double want = 1.0 / std::sqrt(double(spec.shape[1]));
      EXPECT_NEAR(stddev / want, 1.0, 0.3) << spec.name;
      EXPECT_NEAR(mean, 0.0, 0.2 * want) << spec.name;
    }
  }
}

TEST(RandomCheckpoint, SameSeedSameBytesWhateverTheThreadCount) {
  ScratchDir a("minimax_random_a"), b("minimax_random_b");
  ThreadPool one(1), three(3);
  write_random_checkpoint(tiny_m3_as(QuantScheme::kMxfp4), a.str(), 3, 10'000'000, one);
  write_random_checkpoint(tiny_m3_as(QuantScheme::kMxfp4), b.str(), 3, 10'000'000, three);
  for (const auto& entry : fs::directory_iterator(a.str())) {
    const std::string name = entry.path().filename().string();
    EXPECT_EQ(read_file(entry.path().string()), read_file(b.str() + "/" + name)) << name;
  }
  // A range filled in one call equals the same range filled in pieces at odd offsets.
  const ModelConfig model = parse_model_config(tiny_m3_as(QuantScheme::kNone), "m3");
  const std::vector<TensorSpec> table = tensor_table(model);
  const TensorSpec& spec = table.front();  // the embedding, BF16
  const RandomTensorSource source(spec, {spec.name, DType::kBF16, spec.shape}, QuantScheme::kNone,
                                  model, 3);
  std::vector<uint8_t> whole(1000), parts(1000);
  source.fill(600, whole);
  source.fill(600, std::span(parts).first(14));
  source.fill(614, std::span(parts).subspan(14));
  EXPECT_EQ(whole, parts);
  EXPECT_THROW(source.fill(601, std::span(parts).first(4)), Error);  // half a bf16
}

}  // namespace
}  // namespace minimax
