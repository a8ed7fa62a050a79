// .npy writer.
#include "model/npy.h"

#include <bit>
#include <cstring>

#include "base/atomic_output.h"
#include "base/error.h"

namespace minimax {

std::string npy_f32_bytes(std::span<const float> values, const std::vector<int64_t>& shape) {
  static_assert(std::endian::native == std::endian::little,
                "the .npy writer assumes little-endian");
  int64_t count = 1;
  std::string dims;
  for (int64_t d : shape) {
    count *= d;
    dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  }
  if (shape.size() == 1) dims += ',';  // a Python 1-tuple: (n,)
  if (count != static_cast<int64_t>(values.size()))
    fail("npy: {} values do not fill shape ({})", values.size(), dims);
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims + "), }";
  // magic (6) + version (2) + header length (2) + header + '\n' is a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const size_t data_at = out.size();
  out.resize(data_at + values.size() * sizeof(float));
  std::memcpy(out.data() + data_at, values.data(), values.size() * sizeof(float));
  return out;
}

void write_npy_f32(const std::string& path, std::span<const float> values,
                   const std::vector<int64_t>& shape) {
  with_context(path, [&] { write_file_atomic(path, npy_f32_bytes(values, shape)); });
}

}  // namespace minimax
