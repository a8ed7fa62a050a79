// safetensors header parsing and validation (the checks of the reference reader, in its order).
#include "formats/safetensors.h"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/error.h"

namespace minimax {
namespace {

using nlohmann::json;

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The parser quotes the offending bytes; escape anything that is not printable ASCII so the
// message itself stays valid UTF-8.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

// A non-negative JSON integer, or an error naming the tensor and field.
uint64_t as_unsigned(const json& value, const std::string& path, const std::string& tensor,
                     const char* field) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<uint64_t>();
  fail("{}: tensor '{}': {} must hold non-negative integers, found {}", path, tensor, field,
       value.dump());
}

TensorInfo parse_tensor_entry(const std::string& name, const json& entry, const std::string& path) {
  if (!entry.is_object()) fail("{}: tensor '{}': entry is not a JSON object", path, name);
  for (const char* field : {"dtype", "shape", "data_offsets"}) {
    if (!entry.contains(field)) fail("{}: tensor '{}': missing field '{}'", path, name, field);
  }
  TensorInfo info;
  info.name = name;
  const json& dtype = entry["dtype"];
  if (!dtype.is_string()) fail("{}: tensor '{}': dtype is not a string", path, name);
  auto parsed = parse_dtype(dtype.get<std::string>());
  if (!parsed) fail("{}: tensor '{}': unknown dtype '{}'", path, name, dtype.get<std::string>());
  info.dtype = *parsed;
  const json& shape = entry["shape"];
  if (!shape.is_array()) fail("{}: tensor '{}': shape is not an array", path, name);
  for (const json& dim : shape) {
    uint64_t d = as_unsigned(dim, path, name, "shape");
    if (d > static_cast<uint64_t>(INT64_MAX)) fail("{}: tensor '{}': shape overflows", path, name);
    info.shape.push_back(static_cast<int64_t>(d));
  }
  const json& offsets = entry["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2) {
    fail("{}: tensor '{}': data_offsets must be [begin, end]", path, name);
  }
  info.begin = as_unsigned(offsets[0], path, name, "data_offsets");
  info.end = as_unsigned(offsets[1], path, name, "data_offsets");
  return info;
}

// Number of bytes the tensor needs, with the reference's overflow and alignment checks.
uint64_t expected_bytes(const TensorInfo& info, const std::string& path) {
  uint64_t elements = 1;
  for (int64_t d : info.shape) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) {
      fail("{}: tensor '{}': element count of shape {} overflows", path, info.name,
           shape_string(info.shape));
    }
  }
  uint64_t bits = 0;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(dtype_bits(info.dtype)), &bits)) {
    fail("{}: tensor '{}': size of shape {} overflows", path, info.name, shape_string(info.shape));
  }
  if (bits % 8 != 0) {
    fail("{}: tensor '{}': {} elements of {} do not fill whole bytes", path, info.name, elements,
         dtype_name(info.dtype));
  }
  return bits / 8;
}

}  // namespace

uint64_t TensorInfo::numel() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> file_bytes,
                                           const std::string& path) {
  if (file_bytes.size() < 8) {
    fail("{}: file is {} bytes, too small for a safetensors header", path, file_bytes.size());
  }
  const uint64_t n = read_u64_le(file_bytes.data());
  if (n > kMaxSafetensorsHeaderBytes) {
    fail("{}: header length {} exceeds the limit of {} bytes", path, n, kMaxSafetensorsHeaderBytes);
  }
  if (8 + n > file_bytes.size()) {
    fail("{}: header length {} runs past the end of the {}-byte file", path, n, file_bytes.size());
  }
  std::string_view text(reinterpret_cast<const char*>(file_bytes.data()) + 8, n);

  // Duplicate tensor names are disallowed by the format; nlohmann keeps the last silently, so the
  // parser callback sees every top-level key first.
  std::set<std::string> seen;
  std::string duplicate;
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      if (!seen.insert(parsed.get<std::string>()).second && duplicate.empty()) {
        duplicate = parsed.get<std::string>();
      }
    }
    return true;
  };
  json header;
  try {
    header = json::parse(text.begin(), text.end(), on_event);
  } catch (const json::exception& e) {
    fail("{}: header is not valid JSON: {}", path, printable(e.what()));
  }
  if (!header.is_object()) fail("{}: header is not a JSON object", path);
  if (!duplicate.empty()) fail("{}: tensor '{}' appears twice in the header", path, duplicate);

  SafetensorsHeader result;
  result.data_offset = 8 + n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) fail("{}: __metadata__ is not a JSON object", path);
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string()) {
          fail("{}: __metadata__ value for '{}' is not a string", path, m.key());
        }
        result.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    result.tensors.push_back(parse_tensor_entry(it.key(), it.value(), path));
  }

  // Sorted by offsets, the tensors must tile the buffer from 0 with no hole and no overlap.
  std::sort(result.tensors.begin(), result.tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  uint64_t previous_end = 0;
  for (const TensorInfo& info : result.tensors) {
    if (info.end < info.begin) {
      fail("{}: tensor '{}': data_offsets [{}, {}] end before they begin", path, info.name,
           info.begin, info.end);
    }
    if (info.begin != previous_end) {
      fail(
          "{}: tensor '{}': data_offsets [{}, {}] do not start where the previous tensor ends ({})",
          path, info.name, info.begin, info.end, previous_end);
    }
    uint64_t bytes = expected_bytes(info, path);
    if (info.end - info.begin != bytes) {
      fail("{}: tensor '{}': data_offsets [{}, {}] hold {} bytes but {} {} needs {}", path,
           info.name, info.begin, info.end, info.end - info.begin, dtype_name(info.dtype),
           shape_string(info.shape), bytes);
    }
    previous_end = info.end;
  }
  const uint64_t buffer = file_bytes.size() - result.data_offset;
  if (previous_end != buffer) {
    fail("{}: tensors cover {} bytes but the data buffer holds {} (truncated or trailing data)",
         path, previous_end, buffer);
  }
  return result;
}

SafetensorsFile::SafetensorsFile(const std::string& path)
    : file_(path), header_(parse_safetensors_header(file_.bytes(), path)) {
  for (size_t i = 0; i < header_.tensors.size(); ++i) index_[header_.tensors[i].name] = i;
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

const TensorInfo& SafetensorsFile::at(std::string_view name) const {
  const TensorInfo* info = find(name);
  if (info == nullptr) fail("{}: tensor '{}' not found", path(), name);
  return *info;
}

std::span<const uint8_t> SafetensorsFile::data(const TensorInfo& info) const {
  return file_.bytes().subspan(header_.data_offset + info.begin, info.nbytes());
}

void SafetensorsFile::release(const TensorInfo& info) const {
  file_.release(header_.data_offset + info.begin, info.nbytes());
}

}  // namespace minimax
