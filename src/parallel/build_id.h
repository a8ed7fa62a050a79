// The identity of the running binary, for checking that every rank of a job runs the same build.
#pragma once

#include <string>

namespace minimax {

// The GNU build ID note of the executable (hex), or, when it has none, a digest of the
// executable's path, size and modification time prefixed "file:".
std::string program_build_id();

}  // namespace minimax
