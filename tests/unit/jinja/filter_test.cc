// Filters, with tojson as transformers defines it (json.dumps, ensure_ascii=False, ", "/": ").
// Expected strings are what Python jinja2 3.1 renders (check_unit_expectations.py re-checks them).
#include <gtest/gtest.h>

#include "render_helper.h"

namespace minimax::testing_jinja {
namespace {

TEST(Filters, ToJsonIsPythonJsonDumps) {
  EXPECT_EQ(
      render(
          R"j({{ v | tojson }})j",
          R"j({"v": {"b": [1, 2.0, 2.5e-07, 1e+20, null, true], "a": "\u00e9 \"q\" \\ \n\t\u0001<>&'", "e": {}, "l": []}})j"),
      R"j({"b": [1, 2.0, 2.5e-07, 1e+20, null, true], "a": "é \"q\" \\ \n\t\u0001<>&'", "e": {}, "l": []})j");
}

TEST(Filters, ToJsonOptions) {
  EXPECT_EQ(
      render(
          R"j({{ v | tojson(indent=2) }}|{{ v | tojson(sort_keys=true) }}|{{ v | tojson(separators=(',', ':')) }}|{{ 'é🚀' | tojson(ensure_ascii=true) }})j",
          R"j({"v": {"b": [1, {}], "a": null}})j"),
      R"j({
  "b": [
    1,
    {}
  ],
  "a": null
}|{"a": null, "b": [1, {}]}|{"b":[1,{}],"a":null}|"\u00e9\ud83d\ude80")j");
}

TEST(Filters, StringFilters) {
  EXPECT_EQ(
      render(
          R"j([{{ '  a b  ' | trim }}][{{ 'xxaxx' | trim('x') }}][{{ 'MiXed' | lower }}][{{ 'MiXed' | upper }}][{{ 'hello there' | capitalize }}][{{ 'a-a-a' | replace('-', '+') }}][{{ 'aaa' | replace('a', 'b', 2) }}][{{ 12 | string }}][{{ none | string }}])j"),
      R"j([a b][a][mixed][MIXED][Hello there][a+a+a][bba][12][None])j");
}

TEST(Filters, LengthFirstLastJoin) {
  EXPECT_EQ(
      render(
          R"j({{ 'h\u00e9' | length }} {{ [1, 2] | count }} {{ {'a': 1} | length }} {{ [1, 2, 3] | first }} {{ [1, 2, 3] | last }} {{ 'abc' | last }} {{ [] | first }}|{{ [1, 'a', none] | join('-') }} {{ ms | join(', ', attribute='role') }})j",
          R"j({"ms": [{"role": "user"}, {"role": "ai"}]})j"),
      R"j(2 2 1 1 3 c |1-a-None user, ai)j");
}

TEST(Filters, DefaultAndItems) {
  EXPECT_EQ(
      render(
          R"j({{ nope | default('d') }} {{ none | default('d') }} {{ '' | default('d', true) }} {{ 0 | d(5, boolean=true) }} {{ d | items | list | length }} {% for k, v in nope | items %}x{% endfor %})j",
          R"j({"d": {"a": 1, "b": 2}})j"),
      R"j(d None d 5 2 )j");
}

TEST(Filters, SelectRejectMap) {
  EXPECT_EQ(
      render(
          R"j({{ ms | selectattr('role', 'equalto', 'user') | map(attribute='content') | list }} {{ ms | rejectattr('role', 'eq', 'user') | list | length }} {{ ms | selectattr('tool') | list | length }} {{ [1, 2, 3, 4] | select('odd') | list }} {{ [1, 2, 3, 4] | reject('even') | list }} {{ ['a', 'B'] | map('upper') | join }})j",
          R"j({"ms": [{"role": "user", "content": "q1"}, {"role": "ai", "content": "a1", "tool": true}, {"role": "user", "content": "q2"}]})j"),
      R"j(['q1', 'q2'] 1 1 [1, 3] [1, 3] AB)j");
}

TEST(Filters, SequenceFilters) {
  EXPECT_EQ(
      render(
          R"j({{ [3, 1, 2] | sort }} {{ ['b', 'A', 'c'] | sort }} {{ [3, 1, 2] | sort(reverse=true) }} {{ ms | sort(attribute='n') | map(attribute='n') | list }} {{ [1, 2, 1, 3] | unique | list }} {{ 'abc' | reverse }} {{ [1, 2] | reverse | list }} {{ 'ab' | list }})j",
          R"j({"ms": [{"n": 2}, {"n": 1}]})j"),
      R"j([1, 2, 3] ['A', 'b', 'c'] [3, 2, 1] [1, 2] [1, 2, 3] cba [2, 1] ['a', 'b'])j");
}

TEST(Filters, Numbers) {
  EXPECT_EQ(
      render(
          R"j({{ '42' | int }} {{ '42.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '2.5' | float }} {{ 3 | float }} {{ -3 | abs }} {{ -2.5 | abs }})j"),
      R"j(42 42 0 7 3 2.5 3.0 3 2.5)j");
}

}  // namespace
}  // namespace minimax::testing_jinja
