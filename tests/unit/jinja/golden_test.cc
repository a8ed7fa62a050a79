// Renders every case of tests/data/chat/conversations.json with each chat template and compares
// the text byte for byte with tests/data/chat/golden_<template>.json, written by
// tools/chat_golden/make_golden.mjs from Python jinja2 set up as transformers sets it up.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "text/jinja/builtin_templates.h"
#include "text/jinja/chat_template.h"

namespace minimax {
namespace {

using Json = nlohmann::ordered_json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string data_path(const std::string& name) {
  return std::string(MINIMAX_TEST_DATA) + "/chat/" + name;
}

// The case's context with "tools": "@set" replaced by the named tool set.
Json context_of(const Json& conversations, const Json& test_case) {
  Json context = test_case.at("context");
  if (context.contains("tools") && context["tools"].is_string()) {
    context["tools"] =
        conversations.at("tool_sets").at(context["tools"].get<std::string>().substr(1));
  }
  return context;
}

struct TemplateUnderTest {
  std::string name;
  std::string source;
};

class GoldenTest : public testing::TestWithParam<std::string> {};

std::string template_source(const std::string& name) {
  if (auto builtin = builtin_chat_template(name)) return std::string(*builtin);
  return read_file(data_path(name + ".jinja"));
}

TEST_P(GoldenTest, EveryConversationRendersLikeTransformers) {
  const std::string name = GetParam();
  const ChatTemplate chat_template(template_source(name), name);
  const Json conversations = Json::parse(read_file(data_path("conversations.json")));
  const Json golden = Json::parse(read_file(data_path("golden_" + name + ".json")));
  ASSERT_EQ(golden.at("cases").size(), conversations.at("cases").size())
      << "golden_" << name << ".json is stale: run tools/chat_golden/make_golden.mjs";
  size_t checked = 0;
  for (size_t i = 0; i < conversations["cases"].size(); ++i) {
    const Json& test_case = conversations["cases"][i];
    const Json& expected = golden["cases"][i];
    ASSERT_EQ(expected.at("name"), test_case.at("name"));
    SCOPED_TRACE(name + " / " + test_case["name"].get<std::string>());
    const Json context = context_of(conversations, test_case);
    if (expected.contains("output")) {
      EXPECT_EQ(chat_template.render(context), expected["output"].get<std::string>());
    } else {
      const std::string error = expected.at("error").get<std::string>();
      try {
        chat_template.render(context);
        ADD_FAILURE() << "expected an error containing: " << error;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(error), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("chat template " + name + ":"), std::string::npos)
            << e.what();
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 20u);
}

INSTANTIATE_TEST_SUITE_P(Templates, GoldenTest,
                         testing::Values("minimax_m2", "minimax_m2_unsloth", "minimax_m3"));

TEST(BuiltinTemplates, ShipsM2AndM3AndNothingElse) {
  EXPECT_TRUE(builtin_chat_template("minimax_m2").has_value());
  EXPECT_TRUE(builtin_chat_template("minimax_m3").has_value());
  EXPECT_FALSE(builtin_chat_template("minimax_m2_unsloth").has_value());
  EXPECT_FALSE(builtin_chat_template("").has_value());
}

TEST(BuiltinTemplates, EmbeddedTextIsTheTemplateFile) {
  for (const std::string name : {"minimax_m2", "minimax_m3"}) {
    const std::string file =
        read_file(std::string(MINIMAX_TEST_DATA) + "/../../templates/" + name + ".jinja");
    EXPECT_EQ(std::string(*builtin_chat_template(name)), file) << name;
  }
}

}  // namespace
}  // namespace minimax
