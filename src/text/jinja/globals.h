// The global functions a chat template can call: transformers' raise_exception and strftime_now,
// and jinja2's namespace, range and dict.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja/value.h"

namespace minimax::jinja {

// `register_object` is told about every namespace created, so the evaluator can break reference
// cycles through them when rendering ends.
std::vector<std::pair<std::string, Value>> make_globals(
    std::function<void(const std::shared_ptr<Object>&)> register_object);

}  // namespace minimax::jinja
