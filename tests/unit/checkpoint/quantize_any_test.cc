// quantize_checkpoint from every published layout into every target layout, on a tiny M3 (every
// Linear role: attention, index branch, routed and shared experts, dense FFN, lm_head):
//  - each pair: the output config reads back as the target; two Linears of each role hold the
//    bytes of a reference made here (the source decoded to float, then encoded in the target
//    layout) and decode to within the target format's error of the source values; every other
//    tensor is the source's bytes;
//  - --keep: the kept Linears' tensors are the source's bytes, the output config lists them in the
//    target's own field, and a kept layout the target cannot express is refused naming both;
//  - --resume after a kill, and the errors of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "base/atomic_output.h"
#include "base/error.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/quantize_plan.h"
#include "checkpoint/tensor_table.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "checkpoint/weight_codec.h"
#include "formats/float_formats.h"
#include "formats/tensor_store.h"
#include "quantize_sources.h"
#include "scratch_dir.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;
using quantize_test::bytes_of;
using quantize_test::kPrefix;
using quantize_test::slurp;
using quantize_test::source_dir;
using ::testing::HasSubstr;

// The layout a release of `scheme` stores `module` in (its own config, nothing kept).
LinearLayout standard_layout(QuantScheme scheme, const ModelConfig& model,
                             const std::string& module) {
  std::optional<nlohmann::json> hf;
  if (scheme == QuantScheme::kNvfp4) hf = hf_quant_config_json(model);
  nlohmann::json config = model.raw;
  config["quantization_config"] = quantization_config_json(scheme, model);
  if (scheme == QuantScheme::kNone) config.erase("quantization_config");
  return detect_quantization(config, hf, "reference").layout_of(module);
}

// Two Linears of each role: the first and the last the table lists.
std::vector<TensorSpec> sample_linears(const ModelConfig& model) {
  std::map<TensorRole, std::vector<TensorSpec>> by_role;
  for (const TensorSpec& s : tensor_table(model))
    if (s.linear) by_role[s.role].push_back(s);
  std::vector<TensorSpec> out;
  for (const auto& [role, specs] : by_role) {
    out.push_back(specs.front());
    if (specs.size() > 1) out.push_back(specs.back());
  }
  return out;
}

// |decoded - source| within what the target format can hold: half a step of its element format
// at the largest value of a row (a generous bound for every block scale), and a root-mean-square
// error well below the values' own.
void expect_close(const std::vector<float>& source, const std::vector<float>& decoded, int64_t rows,
                  int64_t cols, LinearLayout to, const std::string& name) {
  const bool four_bit = to == LinearLayout::kMxfp4 || to == LinearLayout::kNvfp4;
  const double row_tolerance = to == LinearLayout::kBf16 ? 1.0 / 256 : four_bit ? 0.34 : 0.07;
  double err2 = 0, ref2 = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double amax = 0;
    for (int64_t c = 0; c < cols; ++c)
      amax = std::max(amax, std::fabs(double(source[r * cols + c])));
    for (int64_t c = 0; c < cols; ++c) {
      const double d = double(decoded[r * cols + c]) - source[r * cols + c];
      ASSERT_LE(std::fabs(d), row_tolerance * amax + 1e-30)
          << name << " row " << r << " col " << c << " (" << linear_layout_name(to) << ")";
      err2 += d * d;
      ref2 += double(source[r * cols + c]) * source[r * cols + c];
    }
  }
  EXPECT_LT(std::sqrt(err2 / ref2), four_bit ? 0.2 : 0.05) << name;
}

struct Pair {
  QuantScheme from, to;
};

std::string pair_name(const ::testing::TestParamInfo<Pair>& info) {
  std::string name = std::string(quant_scheme_name(info.param.from)) + "_to_" +
                     std::string(quant_scheme_name(info.param.to));
  for (char& ch : name)
    if (ch == '-') ch = '_';
  return name;
}

class QuantizePairTest : public ::testing::TestWithParam<Pair> {};

TEST_P(QuantizePairTest, ReencodesEachLinearAndCopiesTheRest) {
  const auto [from, to] = GetParam();
  const std::string src = source_dir(from);
  ScratchDir scratch(kPrefix);
  const std::string out = scratch.file("out");
  QuantizeOptions options{src, out, to, false};
  options.threads = 2;
  const QuantizeSummary summary = quantize_checkpoint(options);

  const ModelConfig model = load_model_config(out);
  const QuantConfig source_quant = load_quant_config(src);
  const QuantConfig out_quant = load_quant_config(out);
  ASSERT_EQ(source_quant.scheme, from);
  ASSERT_EQ(out_quant.scheme, to);
  const TensorStore source(src), output(out);
  EXPECT_EQ(summary.tensors_kept, 0u);
  EXPECT_GT(summary.tensors_quantized, 0u);

  for (const TensorSpec& spec : sample_linears(model)) {
    SCOPED_TRACE(spec.name);
    const std::string module = module_name(spec.name);
    const LinearLayout to_layout = out_quant.layout_of(module);
    ASSERT_EQ(to_layout, standard_layout(to, model, module));
    const LinearLayout from_layout = source_quant.layout_of(module);
    const int64_t rows = spec.shape[0], cols = spec.shape[1];
    const std::vector<float> values = decode_weight(source, spec.name, from_layout, rows, cols);
    const std::vector<StoredTensor> stored = stored_tensors(spec, out_quant);
    if (to_layout == LinearLayout::kBf16) {
      ASSERT_EQ(stored.size(), 1u);
      const TensorRef w = output.at(spec.name);
      if (from_layout == LinearLayout::kBf16) {
        EXPECT_EQ(bytes_of(w), bytes_of(source.at(spec.name)));
      } else {
        ASSERT_EQ(w.info->dtype, DType::kBF16);
        const std::vector<float> got = read_as_float(w);
        for (size_t i = 0; i < values.size(); ++i)
          ASSERT_EQ(f32_to_bf16(values[i]), f32_to_bf16(got[i])) << i;
      }
    } else {
      const auto reference = encode_weight(values, rows, cols, to_layout, stored);
      for (size_t i = 0; i < stored.size(); ++i) {
        const TensorRef t = output.at(stored[i].name);
        EXPECT_EQ(t.info->dtype, stored[i].dtype) << stored[i].name;
        EXPECT_EQ(t.info->shape, stored[i].shape) << stored[i].name;
        EXPECT_TRUE(bytes_of(t) == std::string(reference[i].begin(), reference[i].end()))
            << stored[i].name << " differs from the reference";
      }
    }
    expect_close(values, decode_weight(output, spec.name, to_layout, rows, cols), rows, cols,
                 to_layout, spec.name);
  }
  // Tensors that are not Linears (norms, embedding, router, bias) are the source's bytes.
  for (const TensorSpec& spec : tensor_table(model)) {
    if (spec.linear) continue;
    EXPECT_EQ(bytes_of(output.at(spec.name)), bytes_of(source.at(spec.name))) << spec.name;
  }
  // Nothing else: every output tensor is one the target layout stores.
  std::set<std::string> expected;
  for (const TensorSpec& spec : tensor_table(model))
    for (const StoredTensor& s : stored_tensors(spec, out_quant)) expected.insert(s.name);
  const std::vector<std::string> names = output.names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), expected);
  EXPECT_EQ(slurp(out + "/tokenizer.json"), "{\"tiny\": true}\n");
  EXPECT_EQ(fs::exists(out + "/hf_quant_config.json"), to == QuantScheme::kNvfp4);
  EXPECT_FALSE(fs::exists(out + ".partial"));
}

std::vector<Pair> all_pairs() {
  const QuantScheme inputs[] = {QuantScheme::kNone,       QuantScheme::kFp8Block,
                                QuantScheme::kFp8Channel, QuantScheme::kMxfp8,
                                QuantScheme::kMxfp4,      QuantScheme::kMxfp4Fp8Attn,
                                QuantScheme::kNvfp4};
  const QuantScheme outputs[] = {QuantScheme::kFp8Block, QuantScheme::kFp8Channel,
                                 QuantScheme::kMxfp4,    QuantScheme::kMxfp4Fp8Attn,
                                 QuantScheme::kNvfp4,    QuantScheme::kMxfp8};
  std::vector<Pair> pairs;
  for (QuantScheme in : inputs)
    for (QuantScheme o : outputs) pairs.push_back({in, o});
  return pairs;
}

INSTANTIATE_TEST_SUITE_P(EveryLayout, QuantizePairTest, ::testing::ValuesIn(all_pairs()),
                         pair_name);

}  // namespace
}  // namespace minimax
