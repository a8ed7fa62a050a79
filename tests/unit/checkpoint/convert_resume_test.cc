// convert --resume on a tiny M2 MXFP4 checkpoint, from the DST.partial that a run leaves when it is
// killed right after its first shard is recorded: it keeps the recorded shard (re-verified),
// removes everything the manifest does not record (a foreign shard, a stray file, a directory, an
// unrecorded shard of the right name), redoes a recorded shard that was changed, refuses the
// manifest of another source or target, and the output is byte-identical to an uninterrupted run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "base/atomic_output.h"
#include "base/error.h"
#include "checkpoint/convert.h"
#include "checkpoint/convert_manifest.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quantize.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "checkpoint/validate.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

std::string whole_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The same file names in `a` and `b`, with the same bytes.
void expect_identical_dirs(const std::string& a, const std::string& b) {
  std::set<std::string> names_a, names_b;
  for (const auto& entry : fs::directory_iterator(a))
    names_a.insert(entry.path().filename().string());
  for (const auto& entry : fs::directory_iterator(b))
    names_b.insert(entry.path().filename().string());
  EXPECT_EQ(names_a, names_b);
  for (const std::string& name : names_a) {
    if (names_b.count(name)) {
      EXPECT_EQ(whole_file(fs::path(a) / name), whole_file(fs::path(b) / name)) << name;
    }
  }
}

void flip_byte(const std::string& path, uint64_t offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(static_cast<std::streamoff>(offset));
  const char byte = static_cast<char>(file.get() ^ 0x01);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(byte);
}

class ConvertResumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ =
        fs::temp_directory_path() / fmt::format("minimax_resume_{}_{}", ::getpid(), info->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "bf16");
    write_tiny_weights(parse_model_config(tiny_config_json(Arch::kM2, 256), "tiny"),
                       (root_ / "bf16").string(), 3, 2);
    write_file_atomic((root_ / "bf16" / "tokenizer.json").string(), "{\"tiny\": true}\n");
    quantize_checkpoint({(root_ / "bf16").string(), src(), QuantScheme::kMxfp4, false});
    // One run gives both the reference output and the killed run's DST.partial: a copy taken
    // when the first shard is recorded (the second is then written under its .tmp name), which
    // is what --stop-after-shards 1 leaves.
    ConvertOptions o = options(out("full"));
    o.after_shard = [this](size_t done) {
      if (done == 1) fs::copy(out("full.partial"), out("dst.partial"), fs::copy_options::recursive);
    };
    convert_checkpoint(o);
    const std::optional<ConvertManifest> manifest = ConvertManifest::load(partial());
    ASSERT_TRUE(manifest.has_value());
    ASSERT_EQ(manifest->shards().size(), 1u);
    recorded_ = manifest->shards().begin()->first;
    unrecorded_ = recorded_ == "model-00001-of-00002.safetensors"
                      ? "model-00002-of-00002.safetensors"
                      : "model-00001-of-00002.safetensors";
    ASSERT_TRUE(fs::exists(partial() + "/" + unrecorded_ + ".tmp"));
  }
  void TearDown() override { fs::remove_all(root_); }

  ConvertOptions options(const std::string& output, Fp8Target target = Fp8Target::kOcp) const {
    ConvertOptions o;
    o.input_dir = src();
    o.output_dir = output;
    o.target = target;
    o.threads = 2;
    o.show_progress = false;
    o.limits.piece_bytes = 256;
    return o;
  }
  ConvertSummary resume(Fp8Target target = Fp8Target::kOcp) const {
    ConvertOptions o = options(out("dst"), target);
    o.resume = true;
    return convert_checkpoint(o);
  }

  std::string out(const std::string& name) const { return (root_ / name).string(); }
  std::string src() const { return out("mxfp4"); }
  std::string partial() const { return out("dst.partial"); }

  fs::path root_;
  std::string recorded_, unrecorded_;  // shard names in the killed run's DST.partial
};

TEST_F(ConvertResumeTest, KeepsTheRecordedShardAndIsByteIdentical) {
  const ConvertSummary s = resume();
  EXPECT_EQ(s.shards_kept, 1u);
  EXPECT_EQ(s.shards_written, 1u);
  EXPECT_EQ(s.shards_redone, 0u);
  EXPECT_EQ(s.files_removed, 1u);  // the second shard's .tmp
  EXPECT_FALSE(fs::exists(partial()));
  EXPECT_FALSE(fs::exists(out("full") + "/" + ConvertManifest::kFileName));
  expect_identical_dirs(out("full"), out("dst"));
}

TEST_F(ConvertResumeTest, RemovesEverythingTheManifestDoesNotRecord) {
  // A shard of another checkpoint, one under the name of a shard still to come (the right bytes,
  // but nothing says so), a note, a directory, the side files of a run killed while finishing.
  fs::copy_file(src() + "/model-00001-of-00002.safetensors",
                partial() + "/model-00003-of-00003.safetensors");
  fs::copy_file(out("full") + "/" + unrecorded_, partial() + "/" + unrecorded_);
  write_file_atomic(partial() + "/notes.txt", "not a checkpoint file\n");
  fs::create_directories(partial() + "/extra");
  write_file_atomic(partial() + "/extra/model.safetensors", "x");
  fs::copy_file(out("full") + "/config.json", partial() + "/config.json");
  const ConvertSummary s = resume();
  EXPECT_EQ(s.shards_kept, 1u);
  EXPECT_EQ(s.shards_written, 1u);  // the unrecorded one, produced again
  EXPECT_EQ(s.files_removed, 6u);
  for (const char* name : {"model-00003-of-00003.safetensors", "notes.txt", "extra"})
    EXPECT_FALSE(fs::exists(out("dst") + "/" + name)) << name;
  expect_identical_dirs(out("full"), out("dst"));
  const ValidateReport report = validate_conversion({src(), out("dst"), 0, 2});
  EXPECT_TRUE(report.ok()) << format_validate_report(report);
}

TEST_F(ConvertResumeTest, RedoesARecordedShardWhoseHashDiffers) {
  const std::string shard = partial() + "/" + recorded_;
  const uint64_t size = fs::file_size(shard);
  flip_byte(shard, size - 3);
  ::testing::internal::CaptureStderr();
  const ConvertSummary s = resume();
  const std::string warnings = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(s.shards_kept, 0u);
  EXPECT_EQ(s.shards_redone, 1u);
  EXPECT_EQ(s.shards_written, 2u);
  // Caught by the recorded hash, before any re-verification.
  EXPECT_NE(warnings.find(recorded_ + ": " + std::to_string(size)), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("the resume manifest recorded"), std::string::npos) << warnings;
  EXPECT_EQ(warnings.find("kept shard differs"), std::string::npos) << warnings;
  expect_identical_dirs(out("full"), out("dst"));
}

// A shard whose recorded hash still matches but whose bytes this run would not produce (another
// converter version, or a manifest edited along with it) is caught by the re-verification.
TEST_F(ConvertResumeTest, RedoesARecordedShardThatReVerificationRejects) {
  const std::string shard = partial() + "/" + recorded_;
  flip_byte(shard, fs::file_size(shard) - 3);
  std::optional<ConvertManifest> manifest = ConvertManifest::load(partial());
  ASSERT_TRUE(manifest.has_value());
  manifest->record(recorded_, hash_file(shard));
  manifest->save();
  const ConvertSummary s = resume();
  EXPECT_EQ(s.shards_kept, 0u);
  EXPECT_EQ(s.shards_redone, 1u);
  expect_identical_dirs(out("full"), out("dst"));
}

TEST_F(ConvertResumeTest, WithoutAManifestNothingIsTrusted) {
  fs::remove(partial() + "/" + ConvertManifest::kFileName);
  const ConvertSummary s = resume();
  EXPECT_EQ(s.shards_kept, 0u);
  EXPECT_EQ(s.shards_written, 2u);
  EXPECT_EQ(s.files_removed, 2u);  // the unrecorded shard and the .tmp
  expect_identical_dirs(out("full"), out("dst"));
}

// Refusals name the manifest and what differs, and leave DST.partial as it was.
void expect_refused(const std::function<void()>& run, const std::string& partial,
                    const std::string& what) {
  try {
    run();
    ADD_FAILURE() << "resume was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(ConvertManifest::kFileName), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists(partial + "/" + ConvertManifest::kFileName));
}

TEST_F(ConvertResumeTest, RefusesAnotherTarget) {
  expect_refused([&] { resume(Fp8Target::kGaudi2); }, partial(), "target ocp != gaudi2");
  EXPECT_FALSE(fs::exists(out("dst")));
}

TEST_F(ConvertResumeTest, RefusesASourceShardChangedSince) {
  const std::string shard = src() + "/model-00002-of-00002.safetensors";
  fs::last_write_time(shard, fs::last_write_time(shard) + std::chrono::seconds(5));
  expect_refused([&] { resume(); }, partial(), "model-00002-of-00002.safetensors");
}

TEST_F(ConvertResumeTest, RefusesAMalformedManifest) {
  write_file_atomic(partial() + "/" + ConvertManifest::kFileName, "{\"manifest\": 3}\n");
  expect_refused([&] { resume(); }, partial(), "malformed resume manifest");
}

TEST(ConvertManifestHash, SeesEveryByteAndTheLength) {
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("minimax_manifest_hash_{}", ::getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "f").string();
  std::string bytes(100'003, '\0');  // not a multiple of the hash's 32-byte block
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + i / 251);
  write_file_atomic(path, bytes);
  const ShardRecord base = hash_file(path);
  EXPECT_EQ(base.size, bytes.size());
  EXPECT_EQ(hash_file(path), base);
  for (size_t at : {size_t{0}, size_t{31}, size_t{32}, size_t{50'000}, bytes.size() - 1}) {
    std::string changed = bytes;
    changed[at] = static_cast<char>(changed[at] ^ 0x80);
    write_file_atomic(path, changed);
    EXPECT_NE(hash_file(path).hash, base.hash) << "byte " << at;
  }
  write_file_atomic(path, bytes + std::string(1, '\0'));  // a trailing zero changes the length
  EXPECT_NE(hash_file(path).hash, base.hash);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace minimax
