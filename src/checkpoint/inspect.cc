// inspect_checkpoint: the checkpoint directory against the tensor table.
#include "checkpoint/inspect.h"

#include <fmt/format.h>

#include <set>

#include "base/progress.h"
#include "checkpoint/model_config.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/tensor_table.h"
#include "formats/safetensors.h"
#include "formats/tensor_store.h"

namespace minimax {

InspectReport inspect_checkpoint(const std::string& dir) {
  const ModelConfig config = load_model_config(dir);
  const QuantConfig quant = load_quant_config(dir);
  const TensorStore store(dir);
  InspectReport report;
  auto& s = report.summary;
  s["directory"] = dir;
  s["architecture"] = config.architecture;
  s["model_type"] = config.model_type;
  s["dimensions"] = {{"hidden_size", config.hidden_size},
                     {"layers", config.num_layers},
                     {"heads", config.num_heads},
                     {"kv_heads", config.num_kv_heads},
                     {"head_dim", config.head_dim},
                     {"rotary_dim", config.rotary_dim},
                     {"vocab_size", config.vocab_size},
                     {"experts", config.num_experts},
                     {"experts_per_token", config.experts_per_tok},
                     {"expert_intermediate", config.intermediate_size},
                     {"shared_intermediate", config.shared_intermediate_size},
                     {"dense_intermediate", config.dense_intermediate_size}};
  s["quantization"] = quant_scheme_name(quant.scheme);
  // How each role's Linears are stored ("attention": "quark-fp8-channel" beside "routed_expert":
  // "mxfp4" for Quark MXFP4 with FP8 attention); a role stored two ways lists both.
  std::map<std::string, std::set<std::string>> role_layouts;
  for (const TensorSpec& spec : tensor_table(config))
    if (spec.linear)
      role_layouts[std::string(tensor_role_name(spec.role))].insert(
          std::string(linear_layout_name(quant.layout_of(spec.name))));
  nlohmann::ordered_json layouts = nlohmann::ordered_json::object();
  for (const auto& [role, names] : role_layouts) {
    std::string joined;
    for (const std::string& n : names) joined += (joined.empty() ? "" : " + ") + n;
    layouts[role] = joined;
  }
  s["layouts"] = layouts;

  // Expected stored tensors, and the layout each tensor group is stored in.
  std::map<std::string, StoredTensor> expected;
  std::map<std::string, std::string> role_of;
  for (const TensorSpec& spec : tensor_table(config)) {
    for (StoredTensor& t : stored_tensors(spec, quant)) {
      role_of[t.name] = std::string(tensor_role_name(spec.role));
      expected.emplace(t.name, std::move(t));
    }
  }
  std::map<std::string, std::set<std::string>> group_layouts;
  std::map<std::string, std::pair<uint64_t, uint64_t>> per_dtype;  // count, bytes
  for (const std::string& name : store.names()) {
    const TensorInfo& info = *store.at(name).info;
    auto& [count, bytes] = per_dtype[std::string(dtype_name(info.dtype))];
    ++count;
    bytes += info.nbytes();
    auto e = expected.find(name);
    if (e == expected.end()) {
      TensorRole role = classify_tensor(name, config);
      if (engine_skips(role)) {
        report.skipped.push_back(name);
      } else {
        report.unexpected.push_back(
            fmt::format("{} ({} {})", name, dtype_name(info.dtype), shape_string(info.shape)));
      }
      continue;
    }
    if (e->second.dtype != info.dtype || e->second.shape != info.shape) {
      report.mismatched.push_back(fmt::format(
          "{}: found {} {}, expected {} {}", name, dtype_name(info.dtype), shape_string(info.shape),
          dtype_name(e->second.dtype), shape_string(e->second.shape)));
    }
    const std::string suffix = name.substr(name.rfind('.') + 1);
    group_layouts[role_of[name]].insert(suffix + ":" + std::string(dtype_name(info.dtype)));
  }
  for (const auto& [name, t] : expected) {
    if (!store.find(name)) report.missing.push_back(name);
  }
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (const auto& [role, layouts] : group_layouts) {
    std::string joined;
    for (const auto& l : layouts) joined += (joined.empty() ? "" : " + ") + l;
    groups[role] = joined;
  }
  s["tensor_groups"] = groups;
  nlohmann::ordered_json dtypes = nlohmann::ordered_json::object();
  for (const auto& [dtype, cb] : per_dtype)
    dtypes[dtype] = {{"tensors", cb.first}, {"bytes", cb.second}};
  s["dtypes"] = dtypes;
  s["shards"] = store.shard_names();
  s["tensors"] = store.size();
  s["bytes"] = store.total_bytes();
  return report;
}

std::string format_inspect_report(const InspectReport& r, size_t max_list) {
  const auto& s = r.summary;
  std::string out;
  out += fmt::format("checkpoint   {}\n", s["directory"].get<std::string>());
  out += fmt::format("architecture {} ({})\n", s["architecture"].get<std::string>(),
                     s["model_type"].get<std::string>());
  std::string dims;
  for (auto it = s["dimensions"].begin(); it != s["dimensions"].end(); ++it) {
    dims += fmt::format("{}{}={}", dims.empty() ? "" : " ", it.key(), it.value().dump());
  }
  out += fmt::format("dimensions   {}\n", dims);
  out += fmt::format("quantization {}\n", s["quantization"].get<std::string>());
  out += "layouts:\n";
  for (auto it = s["layouts"].begin(); it != s["layouts"].end(); ++it)
    out += fmt::format("  {:<16} {}\n", it.key(), it.value().get<std::string>());
  out += "tensor groups:\n";
  for (auto it = s["tensor_groups"].begin(); it != s["tensor_groups"].end(); ++it) {
    out += fmt::format("  {:<16} {}\n", it.key(), it.value().get<std::string>());
  }
  out += "dtypes:\n";
  for (auto it = s["dtypes"].begin(); it != s["dtypes"].end(); ++it) {
    out += fmt::format("  {:<12} {:>8} tensors {:>12}\n", it.key(),
                       it.value()["tensors"].get<uint64_t>(),
                       format_bytes(it.value()["bytes"].get<uint64_t>()));
  }
  out += fmt::format("shards       {} ({} tensors, {})\n", s["shards"].size(),
                     s["tensors"].get<uint64_t>(), format_bytes(s["bytes"].get<uint64_t>()));
  auto list = [&](const char* title, const std::vector<std::string>& names) {
    if (names.empty()) return;
    out += fmt::format("{} ({}):\n", title, names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      if (max_list && i == max_list) {
        out += fmt::format("  ... and {} more\n", names.size() - max_list);
        break;
      }
      out += "  " + names[i] + "\n";
    }
  };
  list("missing tensors", r.missing);
  list("unexpected tensors", r.unexpected);
  list("mismatched tensors", r.mismatched);
  list("skipped (not loaded)", r.skipped);
  out += r.ok() ? "status       ok\n" : "status       PROBLEMS FOUND\n";
  return out;
}

}  // namespace minimax
