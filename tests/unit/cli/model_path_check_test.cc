// cli/model_path_check.h: each common path mistake gets a message that says what the path is.
#include "cli/model_path_check.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace minimax::cli {
namespace {

namespace fs = std::filesystem;

// The message check_model_path gives for `path`, or "" when it accepts it.
std::string message_for(const std::string& path) {
  try {
    check_model_path(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class ModelPathCheck : public testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("model_path_check_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void touch(const fs::path& file) { std::ofstream(file) << "x"; }
  fs::path dir_;
};

TEST_F(ModelPathCheck, AcceptsADirectoryWithConfigJson) {
  touch(dir_ / "config.json");
  EXPECT_EQ(message_for(dir_.string()), "");
}

TEST_F(ModelPathCheck, MissingDirectory) {
  const std::string path = (dir_ / "nope").string();
  EXPECT_EQ(message_for(path), "--model " + path + ": no such directory");
}

TEST_F(ModelPathCheck, DirectoryWithoutConfigJson) {
  EXPECT_NE(message_for(dir_.string())
                .find(dir_.string() + ": not a checkpoint directory: no "
                                      "config.json"),
            std::string::npos);
}

TEST_F(ModelPathCheck, GgufFile) {
  touch(dir_ / "model-Q8_0.gguf");
  const std::string message = message_for((dir_ / "model-Q8_0.gguf").string());
  EXPECT_NE(message.find("GGUF files are not supported; use the Hugging Face safetensors "
                         "checkpoint"),
            std::string::npos)
      << message;
}

TEST_F(ModelPathCheck, MissingGgufFileIsNamedAsGguf) {
  EXPECT_NE(message_for("MiniMax-M2.5-Q4_K_M.GGUF").find("GGUF files are not supported"),
            std::string::npos);
}

TEST_F(ModelPathCheck, OtherFile) {
  touch(dir_ / "config.json");
  EXPECT_NE(message_for((dir_ / "config.json").string()).find("is a file, not a checkpoint"),
            std::string::npos);
}

TEST(ModelPathCheckId, HuggingFaceIdNotPresentSaysHowToDownloadIt) {
  EXPECT_EQ(message_for("MiniMaxAI/MiniMax-M2.5"),
            "--model MiniMaxAI/MiniMax-M2.5: no such directory; it looks like a Hugging Face id; "
            "download it first with `huggingface-cli download MiniMaxAI/MiniMax-M2.5 --local-dir "
            "DIR` and pass DIR");
}

TEST(ModelPathCheckId, EmptyPathSaysHowToGiveOne) {
  EXPECT_NE(message_for("").find("no model given"), std::string::npos);
}

TEST(ModelPathCheckId, ShapeOfAnId) {
  EXPECT_TRUE(looks_like_hugging_face_id("MiniMaxAI/MiniMax-M2.5"));
  EXPECT_TRUE(looks_like_hugging_face_id("owner/name_1"));
  EXPECT_FALSE(looks_like_hugging_face_id("/models/MiniMax-M2.5"));
  EXPECT_FALSE(looks_like_hugging_face_id("./MiniMax"));
  EXPECT_FALSE(looks_like_hugging_face_id("../x/y"));
  EXPECT_FALSE(looks_like_hugging_face_id("a/b/c"));
  EXPECT_FALSE(looks_like_hugging_face_id("MiniMax-M2.5"));
}

}  // namespace
}  // namespace minimax::cli
