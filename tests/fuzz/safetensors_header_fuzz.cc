// libFuzzer target for the safetensors header parser: any byte string must either parse into a
// header whose tensors tile the buffer, or throw minimax::Error. Crashes, hangs and sanitizer
// reports are the failures. Build with -DMINIMAX_FUZZ=ON (clang); seed corpus:
// tests/data/safetensors_bad/. Without libFuzzer, the same entry point runs over files given on
// the command line (tests/fuzz/replay_main.cc), which CI does on the corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "base/error.h"
#include "formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto header = minimax::parse_safetensors_header({data, size}, "fuzz");
    uint64_t covered = 0;
    for (const auto& t : header.tensors) {
      if (t.begin != covered || t.end < t.begin) std::abort();  // validation let a hole through
      covered = t.end;
    }
    if (header.data_offset + covered != size) std::abort();
  } catch (const minimax::Error&) {
  }
  return 0;
}
