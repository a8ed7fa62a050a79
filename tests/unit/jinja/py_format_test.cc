// Python's text forms: float repr (shortest round trip, exponent outside 1e-4..1e16), str repr
// (quote choice, escapes), json.dumps escaping. Expected values are Python 3's outputs.
#include "text/jinja/py_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace minimax::jinja {
namespace {

TEST(PythonFloatRepr, MatchesPython) {
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(-0.0), "-0.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(python_float_repr(123456789.125), "123456789.125");
  EXPECT_EQ(python_float_repr(1e-4), "0.0001");
  EXPECT_EQ(python_float_repr(1e-5), "1e-05");
  EXPECT_EQ(python_float_repr(2.5e-7), "2.5e-07");
  EXPECT_EQ(python_float_repr(1.5e300), "1.5e+300");
  EXPECT_EQ(python_float_repr(5e-324), "5e-324");
  EXPECT_EQ(python_float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
}

TEST(PythonStringRepr, ChoosesQuotesAndEscapesLikePython) {
  EXPECT_EQ(python_string_repr("plain"), "'plain'");
  EXPECT_EQ(python_string_repr("it's"), "\"it's\"");
  EXPECT_EQ(python_string_repr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(python_string_repr("a\\b\n\r\t\x01\x7f"), "'a\\\\b\\n\\r\\t\\x01\\x7f'");
  EXPECT_EQ(python_string_repr("\u00e9\u00a0\u2028\u200b\U0001F680"),
            "'\u00e9\\xa0\\u2028\\u200b\U0001F680'");
}

TEST(PythonJsonDumps, EscapesLikePython) {
  const Json value = Json::parse(R"({"k": "\u00e9\"\\\b\f\n\r\t\u0001\u001f\u007f\u2028"})");
  EXPECT_EQ(python_json_dumps(value, {}),
            "{\"k\": \"\u00e9\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\u2028\"}");
  JsonDumpOptions ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(python_json_dumps(value, ascii),
            "{\"k\": \"\\u00e9\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f\\u2028\"}");
  const Json infinite = Json::array({std::numeric_limits<double>::infinity()});
  EXPECT_EQ(python_json_dumps(infinite, {}), "[Infinity]");
}

}  // namespace
}  // namespace minimax::jinja
