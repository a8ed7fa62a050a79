// Sampling defaults, EOS ids, special tokens and the chat template read from a checkpoint
// directory's generation_config.json, tokenizer_config.json and chat_template.jinja.
#include "runtime/checkpoint_text.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "runtime_fixture.h"
#include "text/jinja/builtin_templates.h"

namespace minimax {
namespace {

using runtime_test::byte_tokenizer;
using runtime_test::scratch_path;

std::string make_dir(const std::vector<std::pair<std::string, std::string>>& files) {
  const std::string dir = scratch_path("text");
  std::filesystem::create_directories(dir);
  for (const auto& [name, text] : files) std::ofstream(dir + "/" + name) << text;
  return dir;
}

std::string error_of(const std::string& dir) {
  try {
    load_checkpoint_text(dir, byte_tokenizer(), Arch::kM2);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

int32_t id(const char* token) { return *byte_tokenizer().token_id(token); }

TEST(CheckpointTextTest, ReadsDefaultsEosAndTemplate) {
  const std::string dir = make_dir({
      {"generation_config.json",
       R"({"eos_token_id": [200020, 7], "temperature": 0.6, "top_p": 0.9, "top_k": 40,
           "repetition_penalty": 1.1, "max_new_tokens": 64, "do_sample": false})"},
      {"tokenizer_config.json",
       R"({"bos_token": "]~!b[", "eos_token": {"content": "[e~[", "special": true},
           "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}"})"},
  });
  const CheckpointText t = load_checkpoint_text(dir, byte_tokenizer(), Arch::kM2);
  EXPECT_FLOAT_EQ(t.sampling.temperature, 0.6f);
  EXPECT_FLOAT_EQ(t.sampling.top_p, 0.9f);
  EXPECT_EQ(t.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(t.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(t.max_new_tokens, 64);
  EXPECT_EQ(t.eos_token_ids, (std::vector<int32_t>{200020, 7, id("[e~[")}));
  EXPECT_EQ(t.bos_token, "]~!b[");
  EXPECT_EQ(t.eos_token, "[e~[");
  EXPECT_EQ(t.chat_template.substr(0, 15), "{{ bos_token }}");
  EXPECT_NE(t.chat_template_origin.find("tokenizer_config.json"), std::string::npos);
}

TEST(CheckpointTextTest, TemplateFallsBackToTheJinjaFileThenTheBuiltIn) {
  const std::string with_file = make_dir({{"tokenizer_config.json", R"({"eos_token": "[e~["})"},
                                          {"chat_template.jinja", "file template"}});
  EXPECT_EQ(load_checkpoint_text(with_file, byte_tokenizer(), Arch::kM2).chat_template,
            "file template");
  const std::string bare = make_dir({});
  const CheckpointText t = load_checkpoint_text(bare, byte_tokenizer(), Arch::kM3);
  EXPECT_EQ(t.chat_template, *builtin_chat_template("minimax_m3"));
  EXPECT_EQ(t.chat_template_origin, "built-in minimax_m3");
  EXPECT_TRUE(t.eos_token_ids.empty());
  EXPECT_FLOAT_EQ(t.sampling.temperature, 1.0f);
  // A list of named templates: the default one.
  const std::string listed = make_dir({{"tokenizer_config.json",
                                        R"({"chat_template": [{"name": "tool_use", "template": "t"},
                                           {"name": "default", "template": "d"}]})"}});
  EXPECT_EQ(load_checkpoint_text(listed, byte_tokenizer(), Arch::kM2).chat_template, "d");
}

TEST(CheckpointTextTest, ErrorsNameTheFileAndField) {
  std::string e = error_of(make_dir({{"generation_config.json", R"({"temperature": "hot"})"}}));
  EXPECT_NE(e.find("generation_config.json"), std::string::npos) << e;
  EXPECT_NE(e.find("temperature"), std::string::npos) << e;
  e = error_of(make_dir({{"generation_config.json", R"({"top_p": 0})"}}));
  EXPECT_NE(e.find("top_p"), std::string::npos) << e;
  e = error_of(make_dir({{"generation_config.json", R"({"eos_token_id": "x"})"}}));
  EXPECT_NE(e.find("eos_token_id"), std::string::npos) << e;
  e = error_of(make_dir({{"tokenizer_config.json", R"({"eos_token": "<nope>"})"}}));
  EXPECT_NE(e.find("eos_token"), std::string::npos) << e;
  EXPECT_NE(e.find("<nope>"), std::string::npos) << e;
  e = error_of(make_dir({{"tokenizer_config.json", "{"}}));
  EXPECT_NE(e.find("tokenizer_config.json"), std::string::npos) << e;
}

TEST(CheckpointTextTest, AddBosTokenAndTheBosId) {
  CheckpointText t = load_checkpoint_text(
      make_dir({{"tokenizer_config.json", R"({"bos_token": "]~!b[", "add_bos_token": true})"}}),
      byte_tokenizer(), Arch::kM2);
  EXPECT_TRUE(t.add_bos_token);
  EXPECT_EQ(t.bos_token_id, id("]~!b["));
  t = load_checkpoint_text(make_dir({{"tokenizer_config.json", R"({"bos_token": "]~!b["})"}}),
                           byte_tokenizer(), Arch::kM2);
  EXPECT_FALSE(t.add_bos_token);  // GPT2Tokenizer's default
  const std::string e =
      error_of(make_dir({{"tokenizer_config.json", R"({"add_bos_token": "yes"})"}}));
  EXPECT_NE(e.find("tokenizer_config.json"), std::string::npos) << e;
  EXPECT_NE(e.find("add_bos_token"), std::string::npos) << e;
}

TEST(CheckpointTextTest, ThinkMarkersPerArchitecture) {
  EXPECT_EQ(think_markers(Arch::kM2).open, "<think>");
  EXPECT_EQ(think_markers(Arch::kM2).close, "</think>");
  EXPECT_EQ(think_markers(Arch::kM3).open, "<mm:think>");
  EXPECT_EQ(think_markers(Arch::kM3).close, "</mm:think>");
}

}  // namespace
}  // namespace minimax
