// Runs the fuzz entry point over the files named on the command line, plus deterministic
// mutations of each (every byte flipped, every prefix), for builds without libFuzzer.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    for (size_t cut = 0; cut < bytes.size(); ++cut, ++runs) LLVMFuzzerTestOneInput(bytes.data(), cut);
    for (size_t pos = 0; pos < bytes.size(); ++pos) {
      for (uint8_t flip : {0x01, 0x80, 0xFF}) {
        std::vector<uint8_t> m = bytes;
        m[pos] ^= flip;
        LLVMFuzzerTestOneInput(m.data(), m.size());
        ++runs;
      }
    }
  }
  std::printf("replayed %zu inputs from %d files\n", runs, argc - 1);
  return 0;
}
