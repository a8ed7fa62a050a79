// Whitespace handling under transformers' settings (trim_blocks, lstrip_blocks, no trailing
// newline kept), whitespace control signs, comments and raw blocks. Expected strings are what
// Python jinja2 3.1 renders (tools/chat_golden/check_unit_expectations.py re-checks them).
#include <gtest/gtest.h>

#include "render_helper.h"

namespace minimax::testing_jinja {
namespace {

TEST(Whitespace, TrimBlocksRemovesOneNewlineAfterABlockTag) {
  EXPECT_EQ(render(R"j({% if true %}
a
{% endif %}

b)j"),
            R"j(a

b)j");
}

TEST(Whitespace, LstripBlocksRemovesIndentBeforeBlockTagsOnly) {
  EXPECT_EQ(render(R"j(x
    {% if true %}
    {{ 'y' }}
    {% endif %}
z)j"),
            R"j(x
    y
z)j");
}

TEST(Whitespace, LstripNeedsTheTagToOpenItsLine) {
  EXPECT_EQ(render(R"j(a  {% if true %}b{% endif %})j"), R"j(a  b)j");
  EXPECT_EQ(render(R"j({{ 'a' }}  {% if true %}b{% endif %})j"), R"j(a  b)j");
  EXPECT_EQ(render(R"j(  {% if true %}b{% endif %})j"), R"j(b)j");
}

TEST(Whitespace, MinusSignsStripAllWhitespaceIncludingNewlines) {
  EXPECT_EQ(render(R"j(a
   {%- if true -%}
   b
   {%- endif %}
c)j"),
            R"j(abc)j");
  EXPECT_EQ(render(R"j(a   {{- 'b' -}}   
  c)j"),
            R"j(abc)j");
}

TEST(Whitespace, PlusSignsDisableLstripAndTrim) {
  EXPECT_EQ(render(R"j(x
  {%+ if true +%}
y{% endif %})j"),
            R"j(x
  
y)j");
}

TEST(Whitespace, OutputTagsAreNotTrimmed) {
  EXPECT_EQ(render(R"j({{ 'a' }}
{{ 'b' }}
)j"),
            R"j(a
b)j");
}

TEST(Whitespace, CommentsVanishAndFollowBlockRules) {
  EXPECT_EQ(render(R"j(a
  {# note #}
b {#- tight -#} c
{#- multi
line -#}
d)j"),
            R"j(a
bcd)j");
}

TEST(Whitespace, OneTrailingNewlineIsDroppedAndCrLfIsNormalised) {
  EXPECT_EQ(render("a\r\nb\n\n"), "a\nb\n");
  EXPECT_EQ(render("a\rb\n"), "a\nb");
}

TEST(Whitespace, RawBlocksAreText) {
  EXPECT_EQ(render(R"j({% raw %}{{ not evaluated }}{% if %}{% endraw %}
after)j"),
            R"j({{ not evaluated }}{% if %}after)j");
}

TEST(Whitespace, TagsMaySpanLines) {
  EXPECT_EQ(render(R"j({{ 'a' ~
   'b' }}{%
  if true
%}c{% endif %})j"),
            R"j(abc)j");
}

}  // namespace
}  // namespace minimax::testing_jinja
