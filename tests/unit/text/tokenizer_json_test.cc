// Malformed tokenizer.json files: every error names the file and the field at fault.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>

#include "base/error.h"
#include "test_data.h"
#include "text/bpe_tokenizer.h"

namespace minimax {
namespace {

using nlohmann::json;

json valid_config() {
  return testing::read_json(testing::tokenizer_data("trained_tokenizer.json"));
}

// Writes `content` to a temporary file and returns the error message of loading it.
std::string load_text_error(const std::string& content, const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << content;
  std::string message = "(loaded without error)";
  try {
    BpeTokenizer::from_file(path);
  } catch (const Error& e) {
    message = e.what();
  }
  std::remove(path.c_str());
  return message;
}

std::string load_error(const json& config, const std::string& name) {
  return load_text_error(config.dump(), name);
}

struct Case {
  const char* name;
  std::function<void(json&)> corrupt;
  const char* expected_field;
};

TEST(TokenizerJson, ErrorsNameFileAndField) {
  const std::vector<Case> cases = {
      {"no_model", [](json& j) { j.erase("model"); }, ": model"},
      {"vocab_array", [](json& j) { j["model"]["vocab"] = json::array(); }, "model.vocab"},
      {"vocab_id_string", [](json& j) { j["model"]["vocab"]["Ġ"] = "32"; }, "model.vocab[\"Ġ\"]"},
      {"merge_unknown",
       [](json& j) {
         j["model"]["merges"][3] = json::array({"zzzq", "a"});
       },
       "model.merges[3]: token 'zzzq'"},
      {"merge_no_space", [](json& j) { j["model"]["merges"][5] = "ab"; }, "model.merges[5]"},
      {"merge_number", [](json& j) { j["model"]["merges"][7] = 7; }, "model.merges[7]"},
      {"model_type", [](json& j) { j["model"]["type"] = "WordPiece"; }, "model.type"},
      {"dropout", [](json& j) { j["model"]["dropout"] = 0.1; }, "model.dropout"},
      {"unk_missing", [](json& j) { j["model"]["unk_token"] = "<unk>"; }, "model.unk_token"},
      {"prefix", [](json& j) { j["model"]["continuing_subword_prefix"] = "##"; },
       "model.continuing_subword_prefix"},
      {"ignore_merges_type", [](json& j) { j["model"]["ignore_merges"] = "yes"; },
       "model.ignore_merges"},
      {"added_id", [](json& j) { j["added_tokens"][2]["id"] = -4; }, "added_tokens[2].id"},
      {"added_content", [](json& j) { j["added_tokens"][1].erase("content"); },
       "added_tokens[1].content"},
      {"added_collision", [](json& j) { j["added_tokens"][0]["id"] = 65; },
       "added_tokens[0]: id 65 already belongs"},
      {"normalizer",
       [](json& j) {
         j["normalizer"] = {{"type", "Lowercase"}};
       },
       "normalizer"},
      {"decoder",
       [](json& j) {
         j["decoder"] = {{"type", "WordPiece"}};
       },
       "decoder"},
      {"pre_type", [](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["type"] = "Punctuation"; },
       "pre_tokenizer.pretokenizers[0].type"},
      {"pre_regex",
       [](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "[a-"; },
       "pre_tokenizer.pretokenizers[0].pattern"},
      {"pre_behavior",
       [](json& j) { j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Sideways"; },
       "pre_tokenizer.pretokenizers[0].behavior"},
      {"no_byte_level", [](json& j) { j["pre_tokenizer"]["pretokenizers"].erase(1); },
       "pre_tokenizer: no ByteLevel step"},
  };
  for (const Case& c : cases) {
    json config = valid_config();
    c.corrupt(config);
    const std::string name = std::string("tokenizer_") + c.name + ".json";
    const std::string message = load_error(config, name);
    EXPECT_NE(message.find(name), std::string::npos) << c.name << ": " << message;
    EXPECT_NE(message.find(c.expected_field), std::string::npos) << c.name << ": " << message;
  }
}

TEST(TokenizerJson, UnreadableFiles) {
  const std::string missing = ::testing::TempDir() + "does_not_exist/tokenizer.json";
  try {
    BpeTokenizer::from_file(missing);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  const std::string truncated = load_text_error("{\"model\": {\"vocab\": {", "truncated.json");
  EXPECT_NE(truncated.find("truncated.json: not valid JSON"), std::string::npos) << truncated;
  const std::string top_array = load_text_error("[1, 2]", "top_array.json");
  EXPECT_NE(top_array.find("top_array.json"), std::string::npos) << top_array;
}

TEST(TokenizerJson, AcceptsTheOptionalForms) {
  json config = valid_config();
  config["model"].erase("type");  // Hugging Face infers BPE from vocab + merges
  config["normalizer"] = {{"type", "Sequence"}, {"normalizers", json::array()}};
  config["decoder"] = nullptr;
  config["model"]["dropout"] = 0.0;
  config["model"]["continuing_subword_prefix"] = "";
  config["added_tokens"][0].erase("normalized");  // defaults to !special
  const BpeTokenizer tok = BpeTokenizer::from_json(config, "optional forms");
  EXPECT_EQ(tok.decode(tok.encode("Hello ]!p~[")), "Hello ]!p~[");
  EXPECT_EQ(tok.encode("]!p~[").size(), 1u);
}

}  // namespace
}  // namespace minimax
