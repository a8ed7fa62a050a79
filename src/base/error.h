// Error type of the whole library: a message that names the file, tensor, field or parameter at
// fault. Errors are exceptions inside the library; the command line turns them into a message and a
// non-zero exit, the server into an OpenAI error object.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace minimax {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws Error with a fmt-formatted message.
template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

// Prefixes the message of any Error thrown by `body` with `context` (e.g. the file being read).
template <typename Fn>
auto with_context(const std::string& context, Fn&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error& e) {
    throw Error(context + ": " + e.what());
  }
}

}  // namespace minimax
