// Typed reading of config.json fields with errors that name the file and the dotted field path,
// and the readers every architecture shares. Used by model_config.cc, by the config hook of each
// architecture record (checkpoint/arch/) and by the quantization scheme readers
// (checkpoint/quant/).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "checkpoint/model_config.h"

namespace minimax {

// Reads typed fields of one JSON object; every error names the file and the dotted field path.
class ConfigFields {
 public:
  ConfigFields(const nlohmann::json& object, std::string prefix, const std::string& source)
      : object_(object), prefix_(std::move(prefix)), source_(source) {}

  [[noreturn]] void error(std::string_view key, std::string_view message) const {
    fail("{}: field '{}{}': {}", source_, prefix_, key, message);
  }
  // Present and not null (HF writes null for "use the default").
  bool has(std::string_view key) const {
    auto it = object_.find(key);
    return it != object_.end() && !it->is_null();
  }
  const nlohmann::json& get(std::string_view key) const {
    if (!has(key)) error(key, "required but missing");
    return object_.at(key);
  }

  int64_t int64(std::string_view key) const {
    const nlohmann::json& value = get(key);
    if (value.is_number_unsigned()) {
      if (value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        error(key, "integer out of range");
      return int64_t(value.get<uint64_t>());
    }
    if (!value.is_number_integer())
      error(key, fmt::format("must be an integer, got {} {}", value.type_name(), value.dump()));
    return value.get<int64_t>();
  }
  int integer(std::string_view key) const {
    int64_t value = int64(key);
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
      error(key, fmt::format("integer {} out of range", value));
    return int(value);
  }
  int integer_or(std::string_view key, int fallback) const {
    return has(key) ? integer(key) : fallback;
  }
  int positive(std::string_view key) const {
    int value = integer(key);
    if (value <= 0) error(key, fmt::format("must be positive, got {}", value));
    return value;
  }
  double number(std::string_view key) const {
    const nlohmann::json& value = get(key);
    if (!value.is_number())
      error(key, fmt::format("must be a number, got {} {}", value.type_name(), value.dump()));
    return value.get<double>();
  }
  double number_or(std::string_view key, double fallback) const {
    return has(key) ? number(key) : fallback;
  }
  bool boolean_or(std::string_view key, bool fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& value = object_.at(key);
    if (!value.is_boolean())
      error(key, fmt::format("must be true or false, got {} {}", value.type_name(), value.dump()));
    return value.get<bool>();
  }
  std::string string(std::string_view key) const {
    const nlohmann::json& value = get(key);
    if (!value.is_string())
      error(key, fmt::format("must be a string, got {} {}", value.type_name(), value.dump()));
    return value.get<std::string>();
  }
  std::string string_or(std::string_view key, std::string fallback) const {
    return has(key) ? string(key) : fallback;
  }
  // A list of strings; null or absent is empty.
  std::vector<std::string> strings(std::string_view key) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const nlohmann::json& value = object_.at(key);
    if (!value.is_array())
      error(key, fmt::format("must be a list of strings, got {}", value.dump()));
    for (const nlohmann::json& item : value) {
      if (!item.is_string())
        error(key, fmt::format("must be a list of strings, has {}", item.dump()));
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  // `key` must be present and equal to `wanted`; `what` says why.
  void expect(std::string_view key, const nlohmann::json& wanted, std::string_view what) const {
    if (!has(key) || object_.at(key) != wanted)
      error(key, fmt::format("{} (expected {}, got {})", what, wanted.dump(),
                             has(key) ? object_.at(key).dump() : "nothing"));
  }
  const nlohmann::json& object(std::string_view key) const {
    const nlohmann::json& value = get(key);
    if (!value.is_object()) error(key, fmt::format("must be an object, got {}", value.type_name()));
    return value;
  }
  // The object at `key`, read with its path in messages.
  ConfigFields child(std::string_view key) const {
    return {object(key), prefix_ + std::string(key) + ".", source_};
  }
  // A per-layer list of 0/1 flags; its length must be the number of layers.
  std::vector<int> layer_flags(std::string_view key, int num_layers) const {
    const nlohmann::json& value = get(key);
    if (!value.is_array())
      error(key, fmt::format("must be a list of 0/1 per layer, got {}", value.type_name()));
    if (int(value.size()) != num_layers)
      error(key,
            fmt::format("has {} entries but num_hidden_layers is {}", value.size(), num_layers));
    std::vector<int> flags;
    for (size_t i = 0; i < value.size(); ++i) {
      const nlohmann::json& item = value[i];
      if (!item.is_number_integer() || (item.get<int64_t>() != 0 && item.get<int64_t>() != 1))
        error(key, fmt::format("entry {} must be 0 or 1, got {}", i, item.dump()));
      flags.push_back(item.get<int>());
    }
    return flags;
  }
  // An id that HF writes either as an int or as a list of ints (eos); the first one is kept.
  int token_id_or(std::string_view key, int fallback) const {
    if (!has(key)) return fallback;
    const nlohmann::json& value = object_.at(key);
    const nlohmann::json& first = value.is_array() && !value.empty() ? value[0] : value;
    if (!first.is_number_integer())
      error(key, fmt::format("must be a token id or a list of them, got {}", value.dump()));
    return first.get<int>();
  }

  const nlohmann::json& json() const { return object_; }
  const std::string& prefix() const { return prefix_; }
  const std::string& source() const { return source_; }

 private:
  const nlohmann::json& object_;
  std::string prefix_;
  const std::string& source_;
};

// The fields every MiniMax text model has (dimensions, RoPE, experts, routing, token ids), read
// from `text` (the top level for M2, text_config for M3) into `c`. Architecture-specific fields
// (activation, QK-norm kind, per-layer lists) are the record's config hook's.
void read_common_text_fields(const ConfigFields& text, ModelConfig& c);
// `key` as a string (absent: `expected`) must be `expected`; Error names the architecture.
void expect_string_field(const ConfigFields& text, std::string_view key, std::string_view expected,
                         const ModelConfig& c);
// Checks on the dimensions alone, before the per-layer lists that depend on them.
void check_dims(const ConfigFields& text, const ModelConfig& c);
// sparse_attention_config (M3 MSA); absent or disabled leaves all-zero per-layer lists.
void read_sparse_attention(const ConfigFields& text, ModelConfig& c);
// Checks across the per-architecture fields (shared expert, dense FFN width, routed scaling).
void check_consistency(const ConfigFields& text, const ModelConfig& c);

}  // namespace minimax
