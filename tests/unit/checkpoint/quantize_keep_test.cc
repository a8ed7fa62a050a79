// quantize_checkpoint's --keep, --resume and refusals on tiny M3 checkpoints:
//  - kept Linears are the source's tensors byte for byte (scales too), and the output config lists
//    the kept BF16 modules in the target's own field (compressed-tensors `ignore`, ModelOpt
//    `ignore` and `exclude_modules`, Quark `exclude`, fp8-block `modules_to_not_convert`);
//  - a kept layout the target cannot express is refused naming the tensor and both layouts;
//  - a run killed after its first shard, resumed, gives the uninterrupted run's bytes; a resume
//    for another target is refused;
//  - unknown formats and roles, and a directory that is no checkpoint, are named errors.
#include <gtest/gtest.h>

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

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

QuantizeSummary quantize(QuantScheme from, const std::string& out, QuantScheme to,
                         const std::string& keep) {
  QuantizeOptions options{source_dir(from), out, to, false};
  options.keep = parse_keep_roles(keep);
  return quantize_checkpoint(options);
}

// Every stored tensor of every Linear of `roles` is in `out` with the source's bytes.
void expect_kept(QuantScheme from, const std::string& out, const std::set<TensorRole>& roles) {
  const ModelConfig model = load_model_config(out);
  const QuantConfig source_quant = load_quant_config(source_dir(from));
  const TensorStore source(source_dir(from)), output(out);
  size_t checked = 0;
  for (const TensorSpec& spec : tensor_table(model)) {
    if (!spec.linear || !roles.count(spec.role)) continue;
    for (const StoredTensor& s : stored_tensors(spec, source_quant)) {
      EXPECT_EQ(bytes_of(output.at(s.name)), bytes_of(source.at(s.name))) << s.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0u);
}

struct KeepCase {
  QuantScheme from, to;
  const char* keep;
  std::set<TensorRole> roles;
  const char* field;  // where the output's quantization_config lists the kept BF16 modules
};

class QuantizeKeepTest : public ::testing::TestWithParam<KeepCase> {};

TEST_P(QuantizeKeepTest, KeepsTheSourceBytesAndSaysSoInTheConfig) {
  const KeepCase& c = GetParam();
  ScratchDir scratch(kPrefix);
  const std::string out = scratch.file("out");
  const QuantizeSummary summary = quantize(c.from, out, c.to, c.keep);
  EXPECT_GT(summary.tensors_kept, 0u);
  expect_kept(c.from, out, c.roles);
  const nlohmann::json config = read_json_file(out + "/config.json");
  const QuantConfig out_quant = load_quant_config(out);
  EXPECT_EQ(out_quant.scheme, c.to);
  const QuantConfig source_quant = load_quant_config(source_dir(c.from));
  const ModelConfig model = load_model_config(out);
  std::set<std::string> listed;
  for (const auto& entry : config.at("quantization_config").at(c.field)) listed.insert(entry);
  for (const TensorSpec& spec : tensor_table(model)) {
    if (!spec.linear) continue;
    const std::string module = module_name(spec.name);
    if (!c.roles.count(spec.role)) continue;
    // The output config reads each kept Linear as the source stores it.
    const LinearLayout was = source_quant.layout_of(module);
    if (was == LinearLayout::kBf16) {
      EXPECT_EQ(out_quant.layout_of(module), LinearLayout::kBf16) << module;
      // Listed by name unless the target's own rules already leave it unquantized.
      if (listed.count(module) == 0) {
        nlohmann::json standard = model.raw;
        standard["quantization_config"] = quantization_config_json(c.to, model);
        std::optional<nlohmann::json> hf;
        if (c.to == QuantScheme::kNvfp4) hf = hf_quant_config_json(model);
        EXPECT_EQ(detect_quantization(standard, hf, "standard").layout_of(module),
                  LinearLayout::kBf16)
            << module << " is kept in BF16 but not listed in " << c.field;
      }
    } else {
      EXPECT_NE(out_quant.layout_of(module), LinearLayout::kBf16) << module;
      EXPECT_EQ(listed.count(module), 0u) << module << " is kept quantized but listed";
    }
  }
  if (c.to == QuantScheme::kNvfp4) {
    // ModelOpt's legacy file lists the same modules.
    const nlohmann::json legacy = read_json_file(out + "/hf_quant_config.json");
    std::set<std::string> excluded;
    for (const auto& entry : legacy.at("quantization").at("exclude_modules"))
      excluded.insert(entry);
    EXPECT_EQ(excluded, listed);
  }
}

const KeepCase kKeepCases[] = {
    // Quark MXFP4 experts kept, its FP8 attention re-encoded (in BF16, as Quark MXFP4 excludes it).
    {QuantScheme::kMxfp4Fp8Attn,
     QuantScheme::kMxfp4,
     "routed_expert,lm_head",
     {TensorRole::kRoutedExpert, TensorRole::kLmHead},
     "exclude"},
    // BF16 attention, shared experts and dense layers kept in the target's own lists.
    {QuantScheme::kNone,
     QuantScheme::kNvfp4,
     "attention,shared_expert,dense,lm_head",
     {TensorRole::kAttention, TensorRole::kSharedExpert, TensorRole::kDenseFfn,
      TensorRole::kLmHead},
     "ignore"},
    {QuantScheme::kNone,
     QuantScheme::kFp8Channel,
     "shared_expert,dense_ffn",
     {TensorRole::kSharedExpert, TensorRole::kDenseFfn},
     "ignore"},
    {QuantScheme::kNone,
     QuantScheme::kFp8Block,
     "attention,index_branch",
     {TensorRole::kAttention, TensorRole::kIndexBranch},
     "modules_to_not_convert"},
    {QuantScheme::kNone,
     QuantScheme::kMxfp8,
     "routed_expert",
     {TensorRole::kRoutedExpert},
     "ignored_layers"},
    // Quark FP8 attention kept in compressed-tensors FP8 (the same bytes, scale [out] -> [out, 1];
    // its modules leave `ignore`), and back.
    {QuantScheme::kMxfp4Fp8Attn,
     QuantScheme::kFp8Channel,
     "attention",
     {TensorRole::kAttention},
     "ignore"},
    {QuantScheme::kFp8Channel,
     QuantScheme::kMxfp4Fp8Attn,
     "attention",
     {TensorRole::kAttention},
     "exclude"},
    // MXFP4 shared experts kept into the same layout with FP8 attention.
    {QuantScheme::kMxfp4,
     QuantScheme::kMxfp4Fp8Attn,
     "shared_expert",
     {TensorRole::kSharedExpert},
     "exclude"},
};

INSTANTIATE_TEST_SUITE_P(Cases, QuantizeKeepTest, ::testing::ValuesIn(kKeepCases));

TEST(QuantizeKeep, RefusesALayoutTheTargetCannotExpress) {
  ScratchDir scratch(kPrefix);
  // M3 MXFP8 experts kept in a Quark MXFP4 checkpoint: Quark has no MXFP8.
  std::string e = error_of([&] {
    quantize(QuantScheme::kMxfp8, scratch.file("a"), QuantScheme::kMxfp4, "routed_expert");
  });
  EXPECT_THAT(e, HasSubstr("experts.0.w1.weight"));
  EXPECT_THAT(e, HasSubstr("stored as mxfp8"));
  EXPECT_THAT(e, HasSubstr("the mxfp4 layout"));
  // Block FP8 attention into NVFP4, whose config leaves attention in BF16.
  e = error_of([&] {
    quantize(QuantScheme::kFp8Block, scratch.file("b"), QuantScheme::kNvfp4, "attention");
  });
  EXPECT_THAT(e, HasSubstr("self_attn."));
  EXPECT_THAT(e, HasSubstr("stored as fp8-block"));
  EXPECT_THAT(e, HasSubstr("the nvfp4 layout stores it as bf16"));
  EXPECT_FALSE(fs::exists(scratch.file("a"))) << "a refused run leaves no output";
  EXPECT_FALSE(fs::exists(scratch.file("a.partial")));
}

TEST(QuantizeKeep, UnknownRoleListsTheValidOnes) {
  const std::string e = error_of([] { parse_keep_roles("attention,experts"); });
  EXPECT_THAT(e, HasSubstr("--keep: unknown role 'experts'"));
  for (const char* name : {"attention", "shared_expert", "dense_ffn", "lm_head", "routed_expert"})
    EXPECT_THAT(e, HasSubstr(name));
  EXPECT_EQ(parse_keep_roles("dense,lm_head,dense_ffn").size(), 2u);
  EXPECT_TRUE(parse_keep_roles("").empty());
}

TEST(QuantizeErrors, UnknownFormatAndNonCheckpointAreNamed) {
  EXPECT_THAT(error_of([] { parse_quant_scheme("int4"); }),
              HasSubstr("--format: unknown format 'int4'"));
  ScratchDir scratch(kPrefix);
  fs::create_directories(scratch.file("empty"));
  const std::string e = error_of([&] {
    quantize_checkpoint({scratch.file("empty"), scratch.file("out"), QuantScheme::kMxfp4, false});
  });
  EXPECT_THAT(e, HasSubstr(scratch.file("empty")));
  EXPECT_THAT(e, HasSubstr("config.json"));
  EXPECT_FALSE(fs::exists(scratch.file("out.partial")));
}

TEST(QuantizeResume, ContinuesAKilledRunToTheSameBytes) {
  ScratchDir scratch(kPrefix);
  const std::string src = source_dir(QuantScheme::kFp8Block);
  // One run gives both the reference output and the killed run's DST.partial: a copy taken when
  // the first shard is recorded, which is what --stop-after-shards 1 leaves.
  QuantizeOptions full{src, scratch.file("full"), QuantScheme::kMxfp4, false};
  full.keep = {TensorRole::kLmHead};
  full.after_shard = [&](size_t done) {
    if (done == 1)
      fs::copy(scratch.file("full.partial"), scratch.file("dst.partial"),
               fs::copy_options::recursive);
  };
  quantize_checkpoint(full);
  ASSERT_TRUE(fs::exists(scratch.file("dst.partial")));
  // A stray file in the partial output goes; the recorded shard is kept.
  write_file_atomic(scratch.file("dst.partial/stray.txt"), "stray\n");

  QuantizeOptions resumed = full;
  resumed.output_dir = scratch.file("dst");
  resumed.after_shard = nullptr;
  resumed.resume = true;
  // Another target (or other kept roles) is refused, the partial output left as it is.
  QuantizeOptions other = resumed;
  other.keep = {};
  EXPECT_THAT(error_of([&] { quantize_checkpoint(other); }),
              HasSubstr("records the output of another source or target"));
  ASSERT_TRUE(fs::exists(scratch.file("dst.partial/stray.txt")));

  const QuantizeSummary summary = quantize_checkpoint(resumed);
  EXPECT_EQ(summary.shards.shards_kept, 1u);
  EXPECT_EQ(summary.shards.shards_written, 2u);
  // The stray file and the second shard's .tmp (written, not yet committed, at the copy).
  EXPECT_EQ(summary.shards.files_removed, 2u);
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(scratch.file("full")))
    names.insert(entry.path().filename().string());
  std::set<std::string> resumed_names;
  for (const auto& entry : fs::directory_iterator(scratch.file("dst")))
    resumed_names.insert(entry.path().filename().string());
  EXPECT_EQ(names, resumed_names);
  for (const std::string& name : names)
    EXPECT_TRUE(slurp(scratch.file("full/" + name)) == slurp(scratch.file("dst/" + name))) << name;
}

}  // namespace
}  // namespace minimax
