// validate_conversion finds what was tampered with in a converted checkpoint: an expert element, a
// scale, a -0 code, a copied tensor, the config, a side file, a gaudi2 flavour on OCP data, and
// files or tensors that the index does not account for.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "base/atomic_output.h"
#include "base/error.h"
#include "checkpoint/convert.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "checkpoint/validate.h"
#include "checkpoint/validate_reader.h"
#include "formats/tensor_store.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

constexpr const char* kExpertW3 = "model.layers.2.block_sparse_moe.experts.9.w3";

// One MXFP4 M2 checkpoint and its conversion, made once; each test tampers with a copy.
class ValidateCheckpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ =
        new fs::path(fs::temp_directory_path() / fmt::format("minimax_validate_{}", ::getpid()));
    fs::remove_all(*root_);
    fs::create_directories(*root_ / "bf16");
    write_tiny_weights(parse_model_config(tiny_config_json(Arch::kM2, 256), "tiny"),
                       (*root_ / "bf16").string(), 5);
    write_file_atomic((*root_ / "bf16" / "tokenizer.json").string(), "{}\n");
    quantize_checkpoint({(*root_ / "bf16").string(), source(), QuantScheme::kMxfp4, false});
    ConvertOptions o;
    o.input_dir = source();
    o.output_dir = (*root_ / "fp8").string();
    o.show_progress = false;
    o.threads = 2;
    convert_checkpoint(o);
  }
  static void TearDownTestSuite() {
    fs::remove_all(*root_);
    delete root_;
  }
  void SetUp() override {
    fs::remove_all(converted());
    fs::copy(*root_ / "fp8", converted());
  }

  static std::string source() { return (*root_ / "mxfp4").string(); }
  static std::string converted() { return (*root_ / "tampered").string(); }

  static ValidateReport validate(int sample = 0) {
    return validate_conversion({source(), converted(), sample, 2});
  }

  static fs::path* root_;
};
fs::path* ValidateCheckpointTest::root_ = nullptr;

// Where tensor `name`'s data starts in `dir`, and in which file.
std::pair<std::string, uint64_t> locate(const std::string& dir, const std::string& name) {
  TensorStore store(dir);
  TensorRef ref = store.at(name);
  return {ref.file->path(), ref.file->data_offset() + ref.info->begin};
}

void write_bytes(const std::string& dir, const std::string& name, uint64_t index, const void* bytes,
                 size_t n) {
  auto [path, offset] = locate(dir, name);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(offset + index));
  file.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
}

bool mentions(const ValidateReport& report, const std::string& text) {
  for (const std::string& f : report.failures)
    if (f.find(text) != std::string::npos) return true;
  return false;
}

TEST_F(ValidateCheckpointTest, TheUntouchedConversionPasses) {
  const ValidateReport report = validate();
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
  EXPECT_GT(report.elements_compared, 0u);
  EXPECT_EQ(report.side_files, 1u);  // tokenizer.json
}

TEST_F(ValidateCheckpointTest, SamplingComparesFewerExperts) {
  const ModelConfig model = load_model_config(source());
  const ValidateReport report = validate(1);
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
  EXPECT_EQ(report.expert_weights_compared, static_cast<size_t>(model.num_moe_layers()) * 3);
  EXPECT_EQ(report.expert_weights,
            static_cast<size_t>(model.num_moe_layers()) * model.num_experts * 3);
}

TEST_F(ValidateCheckpointTest, FindsAChangedExpertElement) {
  TensorStore store(converted());
  const uint8_t code = store.at(std::string(kExpertW3) + ".weight").data()[70];
  const uint8_t changed = static_cast<uint8_t>(code == 0 ? 0x38 : code ^ 0x01);
  write_bytes(converted(), std::string(kExpertW3) + ".weight", 70, &changed, 1);
  const ValidateReport report = validate();
  EXPECT_FALSE(report.ok());
  // w3 is [32, 64]: byte 70 is row 1, column 6.
  EXPECT_TRUE(mentions(report, std::string(kExpertW3) + ".weight row 1 column 6"))
      << format_validate_report(report);
}

TEST_F(ValidateCheckpointTest, FindsAScaleThatIsNotAPowerOfTwo) {
  const float three = 3.0f;
  write_bytes(converted(), std::string(kExpertW3) + ".weight_scale", 4 * 2, &three, 4);
  const ValidateReport report = validate(1);  // scales are checked even for unsampled experts
  EXPECT_TRUE(mentions(report, std::string(kExpertW3) + ".weight_scale row 2"))
      << format_validate_report(report);
}

TEST_F(ValidateCheckpointTest, FindsANegativeZeroCode) {
  TensorStore store(converted());
  auto bytes = store.at(std::string(kExpertW3) + ".weight").data();
  const auto zero = std::find(bytes.begin(), bytes.end(), uint8_t{0});
  ASSERT_NE(zero, bytes.end()) << "no zero element to flip";
  const uint64_t index = static_cast<uint64_t>(zero - bytes.begin());
  const uint8_t negative_zero = 0x80;
  write_bytes(converted(), std::string(kExpertW3) + ".weight", index, &negative_zero, 1);
  const ValidateReport report = validate();
  EXPECT_TRUE(mentions(report, "negative zero")) << format_validate_report(report);
}

TEST_F(ValidateCheckpointTest, FindsAChangedCopiedTensor) {
  const uint8_t byte = 0x5A;
  write_bytes(converted(), "model.embed_tokens.weight", 1001, &byte, 1);
  const ValidateReport report = validate();
  EXPECT_TRUE(mentions(report, "model.embed_tokens.weight: bytes differ"))
      << format_validate_report(report);
}

TEST_F(ValidateCheckpointTest, FindsALinearMissingFromIgnore) {
  const std::string path = converted() + "/config.json";
  nlohmann::json config = read_json_file(path);
  auto& ignore = config["quantization_config"]["ignore"];
  const std::string dropped = ignore[0].get<std::string>();
  ignore.erase(ignore.begin());
  write_file_atomic(path, config.dump(2));
  const ValidateReport report = validate(1);
  EXPECT_TRUE(mentions(report, "'" + dropped + "' is not in ignore"))
      << format_validate_report(report);
}

TEST_F(ValidateCheckpointTest, AGaudi2FlavourOnOcpDataIsCaught) {
  const std::string path = converted() + "/config.json";
  nlohmann::json config = read_json_file(path);
  config["quantization_config"]["fp8_dtype_flavor"] = "float8_e4m3fnuz";
  write_file_atomic(path, config.dump(2));
  const ValidateReport report = validate();
  EXPECT_EQ(report.target, "gaudi2");
  // Every nonzero OCP row is max-aligned to the 2^8 binade, above Gaudi 2's 240.
  EXPECT_TRUE(mentions(report, "outside the gaudi2 window")) << format_validate_report(report);
}

TEST_F(ValidateCheckpointTest, FindsAChangedSideFile) {
  write_file_atomic(converted() + "/tokenizer.json", "{\"changed\": 1}\n");
  const ValidateReport report = validate(1);
  EXPECT_TRUE(mentions(report, "tokenizer.json: side file differs"))
      << format_validate_report(report);
}

// The converted files, failing the run: a shard of another checkpoint that the index does not
// list (a loader globbing *.safetensors would take it), a note, a directory.
TEST_F(ValidateCheckpointTest, RefusesFilesTheCheckpointDoesNotAccountFor) {
  fs::copy_file(source() + "/model-00001-of-00002.safetensors",
                converted() + "/model-00003-of-00003.safetensors");
  write_file_atomic(converted() + "/notes.txt", "hello\n");
  fs::create_directories(converted() + "/extra");
  const ValidateReport report = validate(1);
  EXPECT_EQ(report.failure_count, 3u) << format_validate_report(report);
  EXPECT_TRUE(mentions(report,
                       "model-00003-of-00003.safetensors: a .safetensors file that the "
                       "checkpoint does not account for (model.safetensors.index.json "
                       "does not list it)"))
      << format_validate_report(report);
  EXPECT_TRUE(mentions(report, "notes.txt: not a file of the source"))
      << format_validate_report(report);
  EXPECT_TRUE(mentions(report, "extra: not a regular file")) << format_validate_report(report);
}

// A file the source has as well is a side file (copied, compared byte for byte).
TEST_F(ValidateCheckpointTest, AcceptsEveryFileOfTheSourceAsASideFile) {
  write_file_atomic(source() + "/README.md", "# tiny\n");
  write_file_atomic(converted() + "/README.md", "# tiny\n");
  const ValidateReport report = validate(1);
  fs::remove(source() + "/README.md");
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
  EXPECT_EQ(report.side_files, 2u);
}

void edit_index(const std::string& dir, const std::function<void(nlohmann::json&)>& edit) {
  const std::string path = dir + "/model.safetensors.index.json";
  nlohmann::json index = read_json_file(path);
  edit(index["weight_map"]);
  write_file_atomic(path, index.dump(2));
}

std::string validate_error(const ValidateOptions& options) {
  try {
    const ValidateReport report = validate_conversion(options);
    return "no error: " + format_validate_report(report);
  } catch (const Error& e) {
    return e.what();
  }
}

TEST_F(ValidateCheckpointTest, RefusesATensorTheIndexDoesNotMap) {
  edit_index(converted(), [](nlohmann::json& map) { map.erase("model.norm.weight"); });
  EXPECT_THAT(validate_error({source(), converted(), 1, 2}),
              ::testing::HasSubstr("'model.norm.weight' in " + converted() + "/model-"));
  EXPECT_THAT(validate_error({source(), converted(), 1, 2}),
              ::testing::HasSubstr("is missing from the index"));
}

TEST_F(ValidateCheckpointTest, RefusesAnIndexEntryWithoutItsTensor) {
  edit_index(converted(),
             [](nlohmann::json& map) { map["model.extra.weight"] = map["model.norm.weight"]; });
  EXPECT_THAT(validate_error({source(), converted(), 1, 2}),
              ::testing::HasSubstr("'model.extra.weight' is mapped to"));
}

TEST_F(ValidateCheckpointTest, RefusesAnIndexEntryOutsideTheDirectory) {
  // The same file, reached through the parent: a path could name any file on the machine.
  const std::string back = "../" + fs::path(converted()).filename().string() + "/";
  edit_index(converted(), [&](nlohmann::json& map) {
    for (auto& [name, file] : map.items()) file = back + file.get<std::string>();
  });
  EXPECT_THAT(validate_error({source(), converted(), 1, 2}),
              ::testing::HasSubstr("is not a .safetensors file of this directory"));
}

// A checkpoint without an index is model.safetensors alone: another shard beside it is refused.
TEST(ValidateFiles, ASingleFileCheckpointIsModelSafetensorsAlone) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("minimax_single_{}", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "source");
  fs::create_directories(dir / "converted");
  const std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  file += header + "x";
  for (const char* side : {"source/config.json", "converted/config.json"})
    write_file_atomic((dir / side).string(), "{}\n");
  write_file_atomic((dir / "converted/model.safetensors").string(), file);
  const CheckedCheckpoint converted((dir / "converted").string());
  ValidateReport clean;
  check_checkpoint_files((dir / "source").string(), converted, clean);
  EXPECT_TRUE(clean.ok()) << format_validate_report(clean);
  write_file_atomic((dir / "converted/model-00001-of-00002.safetensors").string(), file);
  ValidateReport report;
  check_checkpoint_files((dir / "source").string(), converted, report);
  EXPECT_TRUE(mentions(report,
                       "model-00001-of-00002.safetensors: a .safetensors file that the "
                       "checkpoint does not account for (a checkpoint without an index is "
                       "model.safetensors alone)"))
      << format_validate_report(report);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace minimax
