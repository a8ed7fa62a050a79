// Expressions: literals, Python operator semantics and precedence, attribute/item access, slicing,
// string/dict methods, tests, Undefined, and how values print (Python str/repr). Expected strings
// are what Python jinja2 3.1 renders (tools/chat_golden/check_unit_expectations.py re-checks them).
#include <gtest/gtest.h>

#include "render_helper.h"

namespace minimax::testing_jinja {
namespace {

TEST(Expressions, ArithmeticFollowsPython) {
  EXPECT_EQ(
      render(
          R"j({{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 3 / 2 }} {{ 4 / 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1 + 2.5 }} {{ true + 1 }})j"),
      R"j(3 -4 2 -2 1.5 2.0 1024 0.5 3.5 2)j");
}

TEST(Expressions, PrecedenceMatchesJinja) {
  EXPECT_EQ(
      render(
          R"j({{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 'a' ~ 2 * 3 }} {{ not 1 == 2 }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }})j"),
      R"j(7 9 64 4 a6 True True False)j");
}

TEST(Expressions, StringAndListOperators) {
  EXPECT_EQ(
      render(
          R"j({{ 'ab' * 3 }} {{ [1] * 2 + [3] }} {{ 'x' ~ none ~ true ~ 1.0 }} {{ 'b' in 'abc' }} {{ 2 not in [1, 2] }} {{ 'k' in {'k': 1} }})j"),
      R"j(ababab [1, 1, 3] xNoneTrue1.0 True False True)j");
}

TEST(Expressions, AndOrReturnOperands) {
  EXPECT_EQ(render(R"j({{ 0 or 'x' }} {{ 'a' and 'b' }} {{ '' and 'b' }}| {{ none or [] }})j"),
            R"j(x b | [])j");
}

TEST(Expressions, ConditionalExpression) {
  EXPECT_EQ(
      render(
          R"j({{ 'y' if 1 > 0 else 'n' }} {{ 'y' if 0 }}| {{ 'a' if false else 'b' if true else 'c' }})j"),
      R"j(y | b)j");
}

TEST(Expressions, ValuesPrintAsPythonStr) {
  EXPECT_EQ(
      render(
          R"j({{ none }} {{ true }} {{ 1.0 }} {{ 1e20 }} {{ 1e-5 }} {{ 0.0001 }} {{ 123456789012345678 }} {{ [1, 'a', none, {'k': "it's"}] }})j"),
      R"j(None True 1.0 1e+20 1e-05 0.0001 123456789012345678 [1, 'a', None, {'k': "it's"}])j");
  EXPECT_EQ(
      render(R"j({{ x }})j", R"j({"x": {"s": "q\"'\n\t\u00e9\u00a0", "f": 2.5e-07, "b": false}})j"),
      R"j({'s': 'q"\'\n\té\xa0', 'f': 2.5e-07, 'b': False})j");
}

TEST(Expressions, StringLiteralsDecodePythonEscapes) {
  EXPECT_EQ(render(R"j({{ 'a\'b' ~ "c\"d" ~ '\x41\u00e9\U0001F680' ~ '\q' ~ 'x' 'y' }})j"),
            "a'bc\"dA\u00e9\U0001F680\\qxy");
}

TEST(Expressions, AttributesAndItems) {
  EXPECT_EQ(
      render(
          R"j({{ m.role }} {{ m['role'] }} {{ m['items'] }} {{ m.list[-1] }} {{ m.list.0 }} {{ m.missing }}|{{ m.list[7] }}|)j",
          R"j({"m": {"role": "user", "items": 5, "list": [10, 20, 30]}})j"),
      R"j(user user 5 30 10 ||)j");
}

TEST(Expressions, Slicing) {
  EXPECT_EQ(
      render(
          R"j({{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ l[-2:] }} {{ s[1:3] }} {{ s[::-1] }} {{ s[-1] }})j",
          R"j({"l": [1, 2, 3, 4], "s": "h\u00e9llo"})j"),
      "[2, 3, 4] [1, 2, 3] [4, 3, 2, 1] [1, 3] [3, 4] \u00e9l oll\u00e9h o");
}

TEST(Expressions, StringMethods) {
  EXPECT_EQ(
      render(
          R"j({{ 'a</t>b</t>c'.split('</t>') }} {{ ' a  b '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '\n\nx\n'.strip('\n') }}|{{ '  x '.lstrip() }}|{{ 'xyx'.rstrip('x') }})j"),
      R"j(['a', 'b', 'c'] ['a', 'b'] ['a', 'b,c'] ['a,b', 'c'] x|x |xy)j");
  EXPECT_EQ(
      render(
          R"j({{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'aXa'.replace('a', 'b') }} {{ 'AbC'.lower() }} {{ 'AbC'.upper() }} {{ 'hello world'.title() }} {{ 'abcb'.find('b') }} {{ '-'.join(['a', 'b']) }})j"),
      R"j(True True bXb abc ABC Hello World 1 a-b)j");
}

TEST(Expressions, DictMethods) {
  EXPECT_EQ(
      render(
          R"j({{ d.items() | length }} {{ d.keys() | list }} {{ d.values() | list }} {{ d.get('a') }} {{ d.get('z') }} {{ d.get('z', 0) }} {% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %})j",
          R"j({"d": {"a": 1, "b": [2]}})j"),
      R"j(2 ['a', 'b'] [1, [2]] 1 None 0 a=1;b=[2];)j");
}

TEST(Expressions, Tests) {
  EXPECT_EQ(
      render(
          R"j({{ x is defined }} {{ nope is defined }} {{ nope is undefined }} {{ n is none }} {{ s is string }} {{ d is mapping }} {{ l is mapping }} {{ l is iterable }} {{ s is iterable }} {{ 3 is number }} {{ true is number }} {{ true is boolean }} {{ 1 is boolean }} {{ l is sequence }} {{ 3 is odd }} {{ 4 is divisibleby 2 }} {{ 'ab' is lower }} {{ n is not none }})j",
          R"j({"x": 1, "n": null, "s": "s", "d": {}, "l": []})j"),
      R"j(True False True True True True False True True True True True False True True True True False)j");
}

TEST(Expressions, UndefinedIsEmptyAndFalsy) {
  EXPECT_EQ(
      render(
          R"j([{{ nope }}][{{ nope ~ 'x' }}][{% if nope %}t{% else %}f{% endif %}][{{ nope == nope2 }}][{{ nope | length }}][{% for x in nope %}x{% endfor %}][{{ n.attribute }}])j",
          R"j({"n": null})j"),
      R"j([][x][f][True][0][][])j");
}

TEST(Expressions, CallsOfGlobals) {
  EXPECT_EQ(
      render(
          R"j({{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1)['a'] }} {% set ns = namespace(a=1, b='x') %}{{ ns.a }}{{ ns.b }})j"),
      R"j([0, 1, 2] [1, 3, 5] 1 1x)j");
}

}  // namespace
}  // namespace minimax::testing_jinja
