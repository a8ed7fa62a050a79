// convert_checkpoint on tiny M2 / M3 MXFP4 checkpoints: counts, output config, shared experts in
// BF16, refusals, and corrupted sources leaving no output (resume: convert_resume_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "base/atomic_output.h"
#include "base/error.h"
#include "checkpoint/convert.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/tensor_table.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "checkpoint/validate.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

class ConvertCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ =
        fs::temp_directory_path() / fmt::format("minimax_convert_{}_{}", ::getpid(), info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A tiny MXFP4 checkpoint (2 shards) made the way make-tiny does: BF16, then quantize.
  std::string make_mxfp4(Arch arch, QuantScheme scheme = QuantScheme::kMxfp4, int mtp_layers = 0) {
    const std::string name = arch == Arch::kM2 ? "m2" : "m3";
    const std::string bf16 = (root_ / (name + "_bf16")).string();
    fs::create_directories(bf16);
    write_tiny_weights(parse_model_config(tiny_config_json(arch, 256), "tiny"), bf16, 3, 2,
                       mtp_layers);
    write_file_atomic(bf16 + "/tokenizer.json", "{\"tiny\": true}\n");
    const std::string mx = (root_ / (name + "_" + std::string(quant_scheme_name(scheme)))).string();
    quantize_checkpoint({bf16, mx, scheme, false});
    return mx;
  }

  ConvertOptions options(const std::string& in, const std::string& out,
                         Fp8Target target = Fp8Target::kOcp) {
    ConvertOptions o;
    o.input_dir = in;
    o.output_dir = out;
    o.target = target;
    o.threads = 2;
    o.show_progress = false;
    o.limits.piece_bytes = 256;  // many pieces even on tiny tensors
    return o;
  }

  std::string out(const std::string& name) const { return (root_ / name).string(); }

  fs::path root_;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Overwrites byte `index` of tensor `name`'s data in whichever shard of `dir` holds it.
void patch_tensor_byte(const std::string& dir, const std::string& name, uint64_t index,
                       uint8_t value) {
  std::string path;
  uint64_t offset = 0;
  {
    TensorStore store(dir);
    TensorRef ref = store.at(name);
    path = ref.file->path();
    offset = ref.file->data_offset() + ref.info->begin + index;
  }
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(static_cast<char>(value));
}

uint8_t tensor_byte(const std::string& dir, const std::string& name, uint64_t index) {
  TensorStore store(dir);
  return store.at(name).data()[index];
}

constexpr const char* kM2Scale = "model.layers.1.block_sparse_moe.experts.5.w1.weight_scale";

TEST_F(ConvertCheckpointTest, M2ConvertsAndValidates) {
  const std::string src = make_mxfp4(Arch::kM2);
  const ModelConfig model = load_model_config(src);
  const ConvertSummary s = convert_checkpoint(options(src, out("m2_fp8")));
  const size_t experts = static_cast<size_t>(model.num_moe_layers()) * model.num_experts * 3;
  EXPECT_EQ(s.fp8_weights, experts);
  EXPECT_EQ(s.bf16_weights, 0u);
  EXPECT_EQ(s.shards_written, 2u);
  EXPECT_GT(s.copied, 0u);
  // w1, w3: [I, H]; w2: [H, I]
  const uint64_t per_expert = 3 * uint64_t(model.intermediate_size) * model.hidden_size;
  EXPECT_EQ(s.rows.elements_verified, per_expert * model.num_moe_layers() * model.num_experts);
  EXPECT_FALSE(fs::exists(out("m2_fp8.partial")));

  const QuantConfig quant = load_quant_config(out("m2_fp8"));
  EXPECT_EQ(quant.scheme, QuantScheme::kFp8Channel);
  EXPECT_TRUE(quant.fp8_flavor.empty());
  TensorStore store(out("m2_fp8"));
  const std::string w1 = "model.layers.0.block_sparse_moe.experts.0.w1";
  EXPECT_EQ(store.at(w1 + ".weight").info->dtype, DType::kF8_E4M3);
  EXPECT_EQ(store.at(w1 + ".weight_scale").info->dtype, DType::kF32);
  EXPECT_EQ(store.at(w1 + ".weight_scale").info->shape,
            (std::vector<int64_t>{model.intermediate_size, 1}));
  EXPECT_EQ(slurp(out("m2_fp8") + "/tokenizer.json"), "{\"tiny\": true}\n");

  const ValidateReport report = validate_conversion({src, out("m2_fp8"), 0, 2});
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
  EXPECT_EQ(report.expert_weights_compared, experts);
  EXPECT_EQ(report.target, "ocp");
}

TEST_F(ConvertCheckpointTest, Gaudi2TargetMarksTheFlavour) {
  const std::string src = make_mxfp4(Arch::kM2);
  convert_checkpoint(options(src, out("g2"), Fp8Target::kGaudi2));
  EXPECT_EQ(load_quant_config(out("g2")).fp8_flavor, "float8_e4m3fnuz");
  const ValidateReport report = validate_conversion({src, out("g2"), 0, 2});
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
  EXPECT_EQ(report.target, "gaudi2");
}

TEST_F(ConvertCheckpointTest, M3SharedExpertsBecomeBf16) {
  const std::string src = make_mxfp4(Arch::kM3);
  const ModelConfig model = load_model_config(src);
  const ConvertSummary s = convert_checkpoint(options(src, out("m3_fp8")));
  EXPECT_EQ(s.fp8_weights, static_cast<size_t>(model.num_moe_layers()) * model.num_experts * 3);
  EXPECT_EQ(s.bf16_weights, static_cast<size_t>(model.num_moe_layers()) * 3);
  EXPECT_EQ(s.dropped_scales, s.bf16_weights);
  EXPECT_GT(s.rows.bf16_rows, 0u);
  TensorStore store(out("m3_fp8"));
  const std::string shared =
      model.tensor_prefix + "layers.3.block_sparse_moe.shared_experts.gate_proj";
  EXPECT_EQ(store.at(shared + ".weight").info->dtype, DType::kBF16);
  EXPECT_FALSE(store.find(shared + ".weight_scale"));
  const ValidateReport report = validate_conversion({src, out("m3_fp8"), 2, 2});
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
  EXPECT_EQ(report.bf16_weights, s.bf16_weights);
}

// AMD's MXFP4 with FP8 attention: the experts become FP8, the FP8 attention (and index branch)
// is copied byte for byte with its F32 [out] scale declared [out, 1], the output config reads it
// as FP8, and validate agrees.
TEST_F(ConvertCheckpointTest, Fp8AttentionIsCopiedAndTheConfigSaysSo) {
  const std::string src = make_mxfp4(Arch::kM3, QuantScheme::kMxfp4Fp8Attn);
  const ModelConfig model = load_model_config(src);
  const ConvertSummary s = convert_checkpoint(options(src, out("m3_fp8")));
  size_t sparse = 0;
  for (int l = 0; l < model.num_layers; ++l) sparse += model.is_sparse_layer(l) ? 1 : 0;
  ASSERT_GT(sparse, 0u);
  EXPECT_EQ(s.fp8_copied, static_cast<size_t>(model.num_layers) * 4 + sparse * 2);
  EXPECT_EQ(s.fp8_weights, static_cast<size_t>(model.num_moe_layers()) * model.num_experts * 3);

  const QuantConfig written = load_quant_config(out("m3_fp8"));
  EXPECT_EQ(written.scheme, QuantScheme::kFp8Channel);
  const std::string q = model.tensor_prefix + "layers.3.self_attn.q_proj";
  const std::string index_k = model.tensor_prefix + "layers.3.self_attn.index_k_proj";
  EXPECT_EQ(written.layout_of(q), LinearLayout::kFp8Channel);
  EXPECT_EQ(written.layout_of(index_k), LinearLayout::kFp8Channel);
  EXPECT_EQ(written.layout_of(model.tensor_prefix + "layers.0.mlp.up_proj"), LinearLayout::kBf16);
  TensorStore source(src), converted(out("m3_fp8"));
  for (const std::string& m : {q, index_k}) {
    TensorRef sw = source.at(m + ".weight"), cw = converted.at(m + ".weight");
    TensorRef ss = source.at(m + ".weight_scale"), cs = converted.at(m + ".weight_scale");
    EXPECT_EQ(cw.info->dtype, DType::kF8_E4M3);
    EXPECT_TRUE(std::ranges::equal(sw.data(), cw.data())) << m;
    EXPECT_EQ(ss.info->shape, (std::vector<int64_t>{sw.info->shape[0]}));
    EXPECT_EQ(cs.info->shape, (std::vector<int64_t>{sw.info->shape[0], 1}));
    EXPECT_TRUE(std::ranges::equal(ss.data(), cs.data())) << m;
  }
  const ValidateReport report = validate_conversion({src, out("m3_fp8"), 0, 2});
  EXPECT_TRUE(report.ok()) << format_validate_report(report);

  // validate sees a changed byte of a copied FP8 scale.
  patch_tensor_byte(out("m3_fp8"), q + ".weight_scale", 1,
                    tensor_byte(src, q + ".weight_scale", 1) ^ 1);
  const ValidateReport changed = validate_conversion({src, out("m3_fp8"), 0, 2});
  EXPECT_FALSE(changed.ok());
  EXPECT_NE(format_validate_report(changed).find(q + ".weight_scale: bytes differ"),
            std::string::npos)
      << format_validate_report(changed);

  // Gaudi 2 cannot take the copied codes as they are.
  try {
    convert_checkpoint(options(src, out("g2"), Fp8Target::kGaudi2));
    ADD_FAILURE() << "converted FP8 attention for Gaudi 2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Gaudi 2's 240"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out("g2")));
}

// MTP modules past num_hidden_layers (M2) or under mtp. (M3) are not routed experts of the model:
// their MXFP4 weights become BF16 and their Linears must be in the config's ignore list, or
// validate (and a compressed-tensors loader) would expect FP8 for them.
TEST_F(ConvertCheckpointTest, MtpLayersConvertAndValidate) {
  for (Arch arch : {Arch::kM2, Arch::kM3}) {
    SCOPED_TRACE(arch == Arch::kM2 ? "m2" : "m3");
    const std::string src = make_mxfp4(arch, QuantScheme::kMxfp4, 2);
    const ModelConfig model = load_model_config(src);
    std::string expert, attention;
    for (const TensorSpec& spec : mtp_tensor_specs(model, 2)) {
      if (spec.role == TensorRole::kRoutedExpert && expert.empty()) expert = spec.name;
      if (spec.role == TensorRole::kAttention && attention.empty()) attention = spec.name;
    }
    ASSERT_FALSE(expert.empty());
    ASSERT_FALSE(attention.empty());
    EXPECT_EQ(TensorStore(src).at(expert).info->dtype, DType::kU8);  // MXFP4 in the source

    const std::string dst = out(arch == Arch::kM2 ? "m2_mtp" : "m3_mtp");
    const ConvertSummary s = convert_checkpoint(options(src, dst));
    EXPECT_EQ(s.fp8_weights, static_cast<size_t>(model.num_moe_layers()) * model.num_experts * 3);
    TensorStore store(dst);
    EXPECT_EQ(store.at(expert).info->dtype, DType::kBF16);
    const QuantConfig quant = load_quant_config(dst);
    EXPECT_FALSE(quant.is_quantized(module_name(expert)));
    EXPECT_FALSE(quant.is_quantized(module_name(attention)));
    const ValidateReport report = validate_conversion({src, dst, 0, 2});
    EXPECT_TRUE(report.ok()) << format_validate_report(report);
  }
}

// A weight_scale may sit in another shard than its weight (nothing in the format forbids it): the
// scale tensor is then produced by scanning the source in its own shard, and every tensor still
// gets the bytes a conversion with the pair together gives.
TEST_F(ConvertCheckpointTest, AScaleInAnotherShardThanItsWeight) {
  const std::string src = make_mxfp4(Arch::kM2);
  const std::string moved = out("moved_src");
  fs::create_directories(moved);
  for (const auto& entry : fs::directory_iterator(src))
    if (entry.path().extension() != ".safetensors" &&
        entry.path().filename() != "model.safetensors.index.json")
      fs::copy(entry.path(), moved + "/" + entry.path().filename().string());
  // Move one expert's scale from its weight's shard to the other one.
  TensorStore store(src);
  ASSERT_EQ(store.num_shards(), 2u);
  const std::string weight = "model.layers.0.block_sparse_moe.experts.1.w2.weight";
  const std::string scale = weight + "_scale";
  const TensorRef w = store.at(weight);
  size_t from = 0;
  while (&store.shard(from) != w.file) ++from;
  ASSERT_EQ(store.at(scale).file, w.file);
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  for (size_t shard = 0; shard < 2; ++shard) {
    std::vector<TensorRef> refs;
    for (const TensorInfo& info : store.shard(shard).tensors())
      if (info.name != scale) refs.push_back({&store.shard(shard), &info});
    if (shard != from) refs.push_back(store.at(scale));
    std::vector<TensorDecl> decls;
    for (const TensorRef& r : refs) decls.push_back({r.info->name, r.info->dtype, r.info->shape});
    const std::string name = store.shard_names()[shard];
    SafetensorsWriter writer(moved + "/" + name, decls, {{"format", "pt"}});
    for (const TensorDecl& d : writer.order())
      for (const TensorRef& r : refs)
        if (r.info->name == d.name) writer.write_tensor(d.name, r.data());
    writer.finish();
    for (const TensorDecl& d : decls) weight_map[d.name] = name, total += d.nbytes();
  }
  write_safetensors_index(moved + "/model.safetensors.index.json", weight_map, total);

  convert_checkpoint(options(src, out("together")));
  convert_checkpoint(options(moved, out("apart")));
  TensorStore together(out("together")), apart(out("apart"));
  EXPECT_NE(apart.at(scale).file, apart.at(weight).file);
  size_t compared = 0;
  for (size_t shard = 0; shard < together.num_shards(); ++shard)
    for (const TensorInfo& info : together.shard(shard).tensors()) {
      const auto a = together.at(info.name).data(), b = apart.at(info.name).data();
      ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << info.name;
      ++compared;
    }
  EXPECT_GT(compared, 100u);
  const ValidateReport report = validate_conversion({moved, out("apart"), 0, 2});
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
}

TEST_F(ConvertCheckpointTest, ExistingOutputIsRefusedWithoutForce) {
  const std::string src = make_mxfp4(Arch::kM2);
  fs::create_directories(out("taken"));
  write_file_atomic(out("taken") + "/keep.txt", "mine");
  EXPECT_THROW(convert_checkpoint(options(src, out("taken"))), Error);
  EXPECT_EQ(slurp(out("taken") + "/keep.txt"), "mine");
  ConvertOptions o = options(src, out("taken"));
  o.force = true;
  convert_checkpoint(o);
  EXPECT_FALSE(fs::exists(out("taken") + "/keep.txt"));
  EXPECT_TRUE(fs::exists(out("taken") + "/config.json"));
}

// Runs a conversion expected to fail; returns the message and checks nothing was left behind.
std::string failing_convert(const ConvertOptions& o) {
  std::string message;
  try {
    convert_checkpoint(o);
    ADD_FAILURE() << "convert succeeded";
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_FALSE(fs::exists(o.output_dir));
  EXPECT_FALSE(fs::exists(o.output_dir + ".partial"));
  return message;
}

TEST_F(ConvertCheckpointTest, NanScaleStopsTheRun) {
  const std::string src = make_mxfp4(Arch::kM2);
  patch_tensor_byte(src, kM2Scale, 2 * 4 + 1, 0xFF);  // row 4, block 1 (hidden 64: 2 blocks)
  const std::string message = failing_convert(options(src, out("nan")));
  EXPECT_NE(message.find(kM2Scale), std::string::npos) << message;
  EXPECT_NE(message.find("row 4 block 1"), std::string::npos) << message;
  EXPECT_NE(message.find("0xFF"), std::string::npos) << message;
}

TEST_F(ConvertCheckpointTest, UnrepresentableRowStopsTheRun) {
  const std::string src = make_mxfp4(Arch::kM2);
  const uint8_t x = tensor_byte(src, kM2Scale, 2 * 7);
  patch_tensor_byte(src, kM2Scale, 2 * 7, static_cast<uint8_t>(x + 20));  // row 7: a far block
  const std::string message = failing_convert(options(src, out("wide")));
  EXPECT_NE(message.find("model.layers.1.block_sparse_moe.experts.5.w1.weight' row 7"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("binades"), std::string::npos) << message;
}

TEST_F(ConvertCheckpointTest, CorruptShardsLeaveNoOutput) {
  const std::string src = make_mxfp4(Arch::kM2);
  const std::string shard = src + "/model-00002-of-00002.safetensors";
  const std::string original = slurp(shard);
  {
    std::ofstream truncated(shard, std::ios::binary | std::ios::trunc);
    truncated << original.substr(0, original.size() - 100);
  }
  std::string message = failing_convert(options(src, out("truncated")));
  EXPECT_NE(message.find("model-00002-of-00002.safetensors"), std::string::npos) << message;
  {
    std::ofstream bad_header(shard, std::ios::binary | std::ios::trunc);
    std::string broken = original;
    broken[8] = 'X';  // the JSON header no longer starts with '{'
    bad_header << broken;
  }
  message = failing_convert(options(src, out("header")));
  EXPECT_NE(message.find("model-00002-of-00002.safetensors"), std::string::npos) << message;
}

TEST_F(ConvertCheckpointTest, RefusesACheckpointThatIsNotMxfp4) {
  const std::string bf16 = (root_ / "plain").string();
  fs::create_directories(bf16);
  write_tiny_weights(parse_model_config(tiny_config_json(Arch::kM2, 256), "tiny"), bf16, 3);
  const std::string message = failing_convert(options(bf16, out("nope")));
  EXPECT_NE(message.find("MXFP4"), std::string::npos) << message;
}

}  // namespace
}  // namespace minimax
