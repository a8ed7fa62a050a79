// Error messages: syntax errors when a template is parsed and failures while rendering both name
// the template and the line:column of the construct at fault.
#include "base/error.h"

#include <gtest/gtest.h>

#include "render_helper.h"

namespace minimax::testing_jinja {
namespace {

TEST(SyntaxErrors, NameLineAndColumn) {
  EXPECT_EQ(render_error("a\n{% if x %}\nb"),
            "chat template t:2:4: unexpected end of template: {% if %} is never closed (expected "
            "{% elif %} or {% else %} or {% endif %})");
  EXPECT_EQ(render_error("{% for x in y %}{% endif %}"),
            "chat template t:1:20: unexpected tag 'endif' (expected {% else %} or {% endfor %} to "
            "close the {% for %} at 1:4)");
  EXPECT_EQ(render_error("x\n  {% frobnicate %}"), "chat template t:2:6: unknown tag 'frobnicate'");
  EXPECT_EQ(render_error("{% include 'x' %}"),
            "chat template t:1:4: the 'include' tag is not supported by this chat-template "
            "interpreter");
  EXPECT_EQ(render_error("{{ x | nosuchfilter }}"),
            "chat template t:1:8: no filter named 'nosuchfilter'");
  EXPECT_EQ(render_error("{{ x is nosuchtest }}"),
            "chat template t:1:9: no test named 'nosuchtest'");
  EXPECT_EQ(render_error("{{ 1 $ 2 }}"), "chat template t:1:6: unexpected character '$'");
  EXPECT_EQ(render_error("é{{ 'abc }}"), "chat template t:1:5: unterminated string literal");
  EXPECT_EQ(render_error("{{ (1 }}"), "chat template t:1:7: unexpected '}', expected ')'");
  EXPECT_EQ(render_error("{# open"), "chat template t:1:1: missing end of comment tag");
  EXPECT_EQ(render_error("{{ x"),
            "chat template t:1:1: unexpected end of template inside this tag, expected '}}'");
  EXPECT_EQ(render_error("{% break %}"), "chat template t:1:4: 'break' outside of a for loop");
  EXPECT_EQ(render_error("{{ }}"),
            "chat template t:1:4: expected an expression, got end of print "
            "statement '}}'");
  EXPECT_EQ(render_error("{% set x %}a"),
            "chat template t:1:4: unexpected end of template: {% set %} is never closed (expected "
            "{% endset %})");
}

TEST(SyntaxErrors, DeepNestingIsRefusedNotOverflowed) {
  EXPECT_EQ(render_error("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}"),
            "chat template t:1:204: expression nested too deeply");
  std::string blocks;
  for (int i = 0; i < 100000; ++i) blocks += "{% if x %}";
  EXPECT_EQ(render_error(blocks), "chat template t:1:2004: blocks nested too deeply");
  EXPECT_EQ(render(std::string(150, '(') + "{{ " + std::string(150, '(') + "7" +
                   std::string(150, ')') + " }}"),
            std::string(150, '(') + "7");
}

TEST(SyntaxErrors, AreRaisedByTheConstructor) {
  EXPECT_THROW(ChatTemplate("{% if %}", "broken"), Error);
  try {
    ChatTemplate("ok\n{{ a b }}", "named");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "chat template named:2:6: expected end of print statement '}}', got 'b'");
  }
}

TEST(RenderErrors, NameTheFailingConstruct) {
  EXPECT_EQ(render_error("\n  {{ x.y.z }}", R"j({"x": {}})j"),
            "chat template t:2:10: 'dict object' has no attribute 'y'");
  EXPECT_EQ(render_error("{{ nope.attr }}"), "chat template t:1:9: 'nope' is undefined");
  EXPECT_EQ(render_error("{% if true %}\n\n   {{ raise_exception('bad input: ' ~ 3) }}{% endif %}"),
            "chat template t:3:7: bad input: 3");
  EXPECT_EQ(render_error("{{ 'a' + 1 }}"),
            "chat template t:1:8: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(render_error("{{ 1 < 'a' }}"),
            "chat template t:1:4: '<' not supported between instances of 'int' and 'str'");
  EXPECT_EQ(render_error("{{ x | items }}", R"j({"x": "{\"a\": 1}"})j"),
            "chat template t:1:8: Can only get item pairs from a mapping.");
  EXPECT_EQ(
      render_error("{{ x | tojson }}"),
      "chat template t:1:8: tojson: Object of type Undefined is not JSON serializable ('x' is "
      "undefined)");
  EXPECT_EQ(render_error("{% set d = {} %}{% set d.k = 1 %}"),
            "chat template t:1:20: cannot assign attribute on non-namespace object (dict)");
  EXPECT_EQ(render_error("{{ 1 // 0 }}"),
            "chat template t:1:6: integer division or modulo by zero");
  EXPECT_EQ(render_error("{% for x in 5 %}{% endfor %}"),
            "chat template t:1:13: 'int' object is not iterable");
  EXPECT_EQ(render_error("{{ 'abc'.nope() }}"),
            "chat template t:1:10: 'str object' has no attribute 'nope'");
  EXPECT_EQ(render_error("{{ [1].append(2) }}"),
            "chat template t:1:8: access to attribute 'append' of 'list' object is unsafe.");
}

TEST(RenderErrors, InsideAMacroPointIntoTheMacroBody) {
  EXPECT_EQ(render_error("{% macro m(v) %}\n  {{ v.a.b }}\n{% endmacro %}\n{{ m({}) }}"),
            "chat template t:2:10: 'dict object' has no attribute 'a'");
  EXPECT_EQ(render_error("{% macro m(v) %}{% endmacro %}{{ m(1, 2) }}"),
            "chat template t:1:34: macro 'm' takes not more than 1 argument(s)");
}

TEST(RenderErrors, ContextMustBeAnObject) {
  EXPECT_THROW(ChatTemplate("x", "t").render(nlohmann::ordered_json::array()), Error);
}

}  // namespace
}  // namespace minimax::testing_jinja
