// Global functions of the template environment.
#include "text/jinja/globals.h"

#include <ctime>

#include "base/error.h"
#include "text/jinja/arguments.h"

namespace minimax::jinja {
namespace {

constexpr int64_t kMaxRange = 100000;  // jinja2's sandbox MAX_RANGE

Value range(CallArgs& call) {
  BoundArgs args("range", call, {"start", "stop", "step"});
  int64_t start = 0;
  int64_t stop = 0;
  int64_t step = 1;
  if (!args.has(1)) {
    stop = args.int_or_none(0).value_or(0);
  } else {
    start = args.int_or_none(0).value_or(0);
    stop = args.int_or_none(1).value_or(0);
    step = args.int_or_none(2).value_or(1);
  }
  if (step == 0) fail("range() arg 3 must not be zero");
  Json out = Json::array();
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<int64_t>(out.size()) >= kMaxRange) {
      fail("Range too big. The sandbox blocks ranges larger than MAX_RANGE ({}).", kMaxRange);
    }
    out.push_back(i);
  }
  return Value::from_json(std::move(out));
}

Value dict(CallArgs& call) {
  Json out = Json::object();
  if (call.positional.size() > 1)
    fail("dict expected at most 1 argument, got {}", call.positional.size());
  if (!call.positional.empty()) {
    if (!call.positional[0].is_dict()) fail("dict() argument must be a mapping");
    out = call.positional[0].json();
  }
  for (const auto& [key, value] : call.keyword) out[key] = to_json(value, "dict()");
  return Value::from_json(std::move(out));
}

Value strftime_now(CallArgs& call) {
  BoundArgs args("strftime_now", call, {"format"});
  const std::optional<std::string> format = args.string_or_none(0);
  if (!format) fail("strftime_now() needs a format string");
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[256];
  const size_t written = std::strftime(buffer, sizeof buffer, format->c_str(), &local);
  return Value::string(std::string(buffer, written));
}

}  // namespace

std::vector<std::pair<std::string, Value>> make_globals(
    std::function<void(const std::shared_ptr<Object>&)> register_object) {
  std::vector<std::pair<std::string, Value>> globals;
  globals.emplace_back("raise_exception",
                       Value::callable("raise_exception", [](CallArgs& call) -> Value {
                         BoundArgs args("raise_exception", call, {"message"});
                         fail("{}", to_str(args.get(0)));
                       }));
  globals.emplace_back("namespace", Value::callable("namespace", [register_object](CallArgs& call) {
                         auto object = std::make_shared<Object>();
                         object->type_name = "Namespace";
                         object->assignable = true;
                         if (call.positional.size() > 1)
                           fail("namespace() takes at most one positional argument");
                         if (!call.positional.empty()) {
                           const Value& initial = call.positional[0];
                           if (!initial.is_dict()) fail("namespace() argument must be a mapping");
                           for (auto it = initial.json().begin(); it != initial.json().end();
                                ++it) {
                             object->set(it.key(), Value::from_json(it.value()));
                           }
                         }
                         for (const auto& [key, value] : call.keyword) object->set(key, value);
                         register_object(object);
                         return Value::object(object);
                       }));
  globals.emplace_back("range", Value::callable("range", range));
  globals.emplace_back("dict", Value::callable("dict", dict));
  globals.emplace_back("strftime_now", Value::callable("strftime_now", strftime_now));
  return globals;
}

}  // namespace minimax::jinja
