// Reading into values as jinja2's sandboxed environment does: `x.name` (Python attribute first,
// then item), `x[key]` (item first, then attribute), slices, and iteration. Missing things give
// Undefined carrying jinja2's message; mutating methods are refused like the immutable sandbox.
#pragma once

#include <string>
#include <vector>

#include "text/jinja/value.h"

namespace minimax::jinja {

Value get_attribute(const Value& object, const std::string& name);
Value get_item(const Value& object, const Value& key);
// object[start:stop:step]; absent bounds are undefined Values.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);
// What `for x in value` visits: list items, dict keys, string characters; Undefined is empty.
std::vector<Value> iterate(const Value& value);
// Python's len().
size_t length_of(const Value& value);

}  // namespace minimax::jinja
