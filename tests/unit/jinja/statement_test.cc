// Statements: if/elif/else, for with loop variables, else and filter, break/continue, set scoping
// (jinja2 keeps loop-body assignments inside the iteration), namespaces, macros, block set.
// Expected strings are what Python jinja2 3.1 renders (check_unit_expectations.py re-checks them).
#include <gtest/gtest.h>

#include "render_helper.h"

namespace minimax::testing_jinja {
namespace {

TEST(Statements, IfElifElse) {
  EXPECT_EQ(
      render(
          R"j({% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %},{% endfor %})j"),
      R"j(one,two,many,)j");
}

TEST(Statements, LoopVariables) {
  EXPECT_EQ(
      render(
          R"j({% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('+', '-') }} {% endfor %})j"),
      R"j(103TrueFalse3b+ 212FalseFalse3ac- 321FalseTrue3b+ )j");
}

TEST(Statements, LoopOverDictGivesKeysAndTupleTargetsUnpack) {
  EXPECT_EQ(
      render(
          R"j({% for k in d %}{{ k }}{% endfor %} {% for k, v in d | items %}{{ k }}{{ v }}{% endfor %} {% for (a, b) in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %})j",
          R"j({"d": {"z": 1, "a": 2}})j"),
      R"j(za z1a2 37)j");
}

TEST(Statements, ForElseAndLoopFilter) {
  EXPECT_EQ(
      render(
          R"j({% for x in [] %}x{% else %}empty{% endfor %} {% for x in [1, 2, 3, 4] if x is even %}{{ x }}/{{ loop.length }}{% endfor %} {% for x in [1] if x > 5 %}x{% else %}none left{% endfor %})j"),
      R"j(empty 2/24/2 none left)j");
}

TEST(Statements, BreakAndContinue) {
  EXPECT_EQ(
      render(
          R"j({% for x in range(10) %}{% if x is odd %}{% continue %}{% endif %}{% if x > 6 %}{% break %}{% endif %}{{ x }}{% endfor %})j"),
      R"j(0246)j");
}

TEST(Statements, SetInsideALoopStaysInTheIteration) {
  EXPECT_EQ(
      render(
          R"j({% set x = 0 %}{% for i in [1, 2, 3] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}|{{ x }})j"),
      R"j(010203|0)j");
}

TEST(Statements, SetInsideIfIsVisibleAfterIt) {
  EXPECT_EQ(render(R"j({% if true %}{% set x = 5 %}{% endif %}{{ x }})j"), R"j(5)j");
}

TEST(Statements, NamespaceCarriesValuesOutOfLoops) {
  EXPECT_EQ(
      render(
          R"j({% set ns = namespace(last=-1, seen=[]) %}{% for m in ms %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}{{ ns.last }} {{ ns.seen }})j",
          R"j({"ms": [{"role": "user"}, {"role": "ai"}, {"role": "user"}, {"role": "ai"}]})j"),
      R"j(2 [])j");
}

// A namespace that holds itself is a reference cycle; the sanitizer build's leak check sees it
// if rendering does not release namespaces.
TEST(Statements, NamespaceHoldingItselfIsReleased) {
  EXPECT_EQ(render(R"j({% set ns = namespace(n=1) %}{% set ns.me = ns %}{{ ns.me.me.n }})j"),
            R"j(1)j");
}

TEST(Statements, TupleSet) {
  EXPECT_EQ(render(R"j({% set a, b = [1, 2] %}{{ b }}{{ a }} {% set t = 1, 2 %}{{ t | length }})j"),
            R"j(21 2)j");
}

TEST(Statements, MacrosWithDefaultsKeywordsAndRecursion) {
  EXPECT_EQ(
      render(
          R"j({% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }} {{ greet() }})j"),
      R"j(Hi A! Hi B? Hi C. Hi !)j");
  EXPECT_EQ(
      render(
          R"j({% macro walk(v) %}{% if v is mapping %}{% for k, x in v | items %}<{{ k }}>{{ walk(x) }}</{{ k }}>{% endfor %}{% else %}{{ v }}{% endif %}{% endmacro %}{{ walk(d) }})j",
          R"j({"d": {"a": {"b": 1, "c": "x"}}})j"),
      R"j(<a><b>1</b><c>x</c></a>)j");
}

TEST(Statements, MacrosSeeTheirDefiningScopeAtCallTime) {
  EXPECT_EQ(
      render(
          R"j({% macro m() %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}{% set x = 2 %}{{ m() }}{% for i in [7, 8] %}{% macro n() %}{{ i }}{% endmacro %}{{ n() }}{% endfor %})j"),
      R"j(1278)j");
}

TEST(Statements, SetInsideAMacroStaysInTheMacro) {
  EXPECT_EQ(
      render(
          R"j({% set y = 'outer' %}{% macro m() %}{% if y is defined %}{% set y = 'inner' %}{% endif %}{{ y }}{% endmacro %}{{ m() }} {{ y }})j"),
      R"j(inner outer)j");
}

TEST(Statements, BlockSetWithFilters) {
  EXPECT_EQ(render(R"j({% set text | upper | trim %}
  hello {{ 'you' }}
{% endset %}[{{ text }}])j"),
            R"j([HELLO YOU])j");
}

TEST(Statements, GenerationTagRendersItsBody) {
  EXPECT_EQ(render(R"j(a{% generation %}b{{ 'c' }}{% endgeneration %}d)j"), "abcd");
}

}  // namespace
}  // namespace minimax::testing_jinja
