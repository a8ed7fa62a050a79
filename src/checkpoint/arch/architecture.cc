// The registry of architecture records and the MiniMax tensor spelling the records share (the
// module paths are the tensor rows'; the prefixes and lm_head name are the record's).
#include "checkpoint/arch/architecture.h"

#include <fmt/format.h>

#include <array>
#include <charconv>

#include "base/error.h"
#include "checkpoint/tensor_rows.h"

namespace minimax {
namespace {

// A record's file defines it; this list is the one line a new architecture adds here (a static
// library drops object files nothing references, so self-registration would not survive linking).
const std::array<const ArchitectureRecord*, 2>& records() {
  static const std::array<const ArchitectureRecord*, 2> list = {&minimax_m2_record(),
                                                                &minimax_m3_record()};
  return list;
}

// Routed experts sit under "layers.N.block_sparse_moe.experts.E."; the path after it is the row's.
constexpr std::string_view kExperts = "block_sparse_moe.experts.";

bool consume(std::string_view& text, std::string_view prefix) {
  if (text.substr(0, prefix.size()) != prefix) return false;
  text.remove_prefix(prefix.size());
  return true;
}

// Consumes "N." and returns N; -1 (text unchanged) when malformed.
int consume_index(std::string_view& text) {
  const size_t dot = text.find('.');
  if (dot == 0 || dot == std::string_view::npos) return -1;
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + dot, value);
  if (ec != std::errc() || end != text.data() + dot || value < 0) return -1;
  text.remove_prefix(dot + 1);
  return value;
}

}  // namespace

std::span<const ArchitectureRecord* const> registered_architectures() { return records(); }

const ArchitectureRecord& find_architecture(std::string_view architecture,
                                            const std::string& source) {
  std::string known;
  for (const ArchitectureRecord* r : records()) {
    if (r->architecture == architecture) return *r;
    known += (known.empty() ? "" : ", ") + std::string(r->architecture);
  }
  fail("{}: field 'architectures': '{}' is not supported (registered: {})", source, architecture,
       known);
}

const ArchitectureRecord& architecture_record(Arch arch) {
  for (const ArchitectureRecord* r : records())
    if (r->arch == arch) return *r;
  fail("architecture_record: no record of family {}", static_cast<int>(arch));
}

std::string minimax_tensor_name(const ArchitectureRecord& record, const TensorId& id) {
  const TensorRow& row = tensor_row(id.key);
  switch (row.scope) {
    case TensorScope::kModel:
      if (row.hf_path.empty()) return std::string(record.lm_head_name);
      return fmt::format("{}{}", record.tensor_prefix, row.hf_path);
    case TensorScope::kLayer:
      return fmt::format("{}layers.{}.{}", record.tensor_prefix, id.layer, row.hf_path);
    case TensorScope::kExpert:
      return fmt::format("{}layers.{}.{}{}.{}", record.tensor_prefix, id.layer, kExperts, id.expert,
                         row.hf_path);
  }
  return {};
}

std::optional<int> minimax_layer_of_name(const ArchitectureRecord& record, std::string_view name) {
  if (!consume(name, record.tensor_prefix) || !consume(name, "layers.")) return std::nullopt;
  const int layer = consume_index(name);
  if (layer < 0) return std::nullopt;
  return layer;
}

std::optional<TensorId> parse_minimax_tensor_name(const ArchitectureRecord& record,
                                                  std::string_view name) {
  if (name == record.lm_head_name) return TensorId{TensorKey::kLmHead};
  if (!consume(name, record.tensor_prefix)) return std::nullopt;
  TensorId id;
  TensorScope scope = TensorScope::kModel;
  if (consume(name, "layers.")) {
    id.layer = consume_index(name);
    if (id.layer < 0) return std::nullopt;
    scope = TensorScope::kLayer;
    if (consume(name, kExperts)) {
      id.expert = consume_index(name);
      if (id.expert < 0) return std::nullopt;
      scope = TensorScope::kExpert;
    }
  }
  for (const TensorRow& row : tensor_rows()) {
    if (row.scope == scope && !row.hf_path.empty() && row.hf_path == name) {
      id.key = row.key;
      return id;
    }
  }
  return std::nullopt;
}

}  // namespace minimax
