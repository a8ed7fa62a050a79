// Real-width random checkpoints from a released config.json: slicing the config to N layers and
// streaming the shards.
#include "checkpoint/hf_config_checkpoint.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/log.h"
#include "base/progress.h"
#include "base/thread_pool.h"
#include "checkpoint/model_config.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/tensor_table.h"
#include "formats/safetensors_writer.h"

namespace minimax {
namespace {

using nlohmann::json;

// Per-layer lists of the language model's config object, and of its sparse_attention_config.
constexpr std::string_view kLayerLists[] = {"attn_type_list", "moe_layer_freq", "layer_types",
                                            "mlp_layer_types"};
constexpr std::string_view kSparseLayerLists[] = {"sparse_attention_freq",
                                                  "sparse_disable_index_value"};

// Cuts `object[key]` (when present) from `total` entries to `layers`.
void cut_list(json& object, std::string_view key, int total, int layers, const std::string& field,
              const std::string& source) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return;
  if (!it->is_array() || static_cast<int>(it->size()) != total)
    fail("{}: field '{}{}': expected a list of {} entries (one per layer), got {}", source, field,
         key, total, it->dump().substr(0, 80));
  it->erase(it->begin() + layers, it->end());
}

// The config object that holds num_hidden_layers: text_config (M3) or the top level (M2).
json& language_model_object(json& config) {
  auto text = config.find("text_config");
  return text != config.end() && text->is_object() ? *text : config;
}

// Bytes generated per step: large enough that each thread works on megabytes, small enough to
// keep memory flat whatever the tensor size.
constexpr uint64_t kGenerateChunkBytes = 64ull << 20;

// Streams one stored tensor into the writer in chunks, each filled by all threads.
void write_random_tensor(SafetensorsWriter& writer, const TensorDecl& decl,
                         const RandomTensorSource& source, std::vector<uint8_t>& buffer,
                         ThreadPool& pool, Progress& progress) {
  const uint64_t total = decl.nbytes();
  constexpr uint64_t kPiece = 1 << 20;  // a multiple of every element size
  for (uint64_t offset = 0; offset < total; offset += kGenerateChunkBytes) {
    const uint64_t n = std::min(kGenerateChunkBytes, total - offset);
    const uint64_t pieces = (n + kPiece - 1) / kPiece;
    pool.parallel_for(pieces, [&](size_t begin, size_t end, size_t) {
      for (size_t p = begin; p < end; ++p) {
        const uint64_t at = p * kPiece, len = std::min(kPiece, n - at);
        source.fill(offset + at, std::span(buffer.data() + at, len));
      }
    });
    writer.write(std::span<const uint8_t>(buffer.data(), n));
    progress.add(n);
  }
}

}  // namespace

json slice_hf_config(const json& config, int layers, const std::string& source) {
  json out = config;
  json& lm = language_model_object(out);
  const std::string prefix = &lm == &out ? "" : "text_config.";
  auto num = lm.find("num_hidden_layers");
  if (num == lm.end() || !num->is_number_integer())
    fail("{}: field '{}num_hidden_layers': required integer missing", source, prefix);
  const int total = num->get<int>();
  if (layers < 1 || layers > total)
    fail("{}: --layers {} is outside [1, {}] (num_hidden_layers)", source, layers, total);
  for (std::string_view key : kLayerLists) cut_list(lm, key, total, layers, prefix, source);
  auto sparse = lm.find("sparse_attention_config");
  if (sparse != lm.end() && sparse->is_object()) {
    for (std::string_view key : kSparseLayerLists)
      cut_list(*sparse, key, total, layers, prefix + "sparse_attention_config.", source);
  }
  *num = layers;
  return out;
}

json hf_config_for_scheme(const json& config, QuantScheme scheme, const std::string& source) {
  const bool has_own = config.contains("quantization_config") ||
                       (config.contains("text_config") && config["text_config"].is_object() &&
                        config["text_config"].contains("quantization_config"));
  if (has_own && detect_quantization(config, std::nullopt, source).scheme == scheme) return config;
  json out = config;
  out.erase("quantization_config");
  if (out.contains("text_config") && out["text_config"].is_object())
    out["text_config"].erase("quantization_config");
  if (scheme != QuantScheme::kNone)
    out["quantization_config"] = quantization_config_json(scheme, parse_model_config(out, source));
  return out;
}

RandomCheckpointSummary write_random_checkpoint(const json& config, const std::string& dir,
                                                uint64_t seed, uint64_t max_shard_bytes,
                                                ThreadPool& pool) {
  const std::string source = dir + "/config.json";
  const ModelConfig model = parse_model_config(config, source);
  std::optional<json> hf_quant;
  const QuantConfig probe = detect_quantization(config, std::nullopt, source);
  if (probe.scheme == QuantScheme::kNvfp4) hf_quant = hf_quant_config_json(model);
  const QuantConfig quant = detect_quantization(config, hf_quant, source);

  // Every stored tensor of the table, in table order, with the logical tensor it belongs to.
  const std::vector<TensorSpec> table = tensor_table(model);
  std::vector<TensorDecl> decls;
  std::map<std::string, std::pair<const TensorSpec*, StoredTensor>> origin;
  for (const TensorSpec& spec : table) {
    for (const StoredTensor& stored : stored_tensors(spec, quant)) {
      decls.push_back({stored.name, stored.dtype, stored.shape});
      origin.emplace(stored.name, std::pair{&spec, stored});
    }
  }
  const auto shards = plan_shards(decls, max_shard_bytes);
  RandomCheckpointSummary summary;
  summary.shards = static_cast<int>(shards.size());
  summary.tensors = decls.size();
  for (const TensorDecl& d : decls) summary.tensor_bytes += d.nbytes();
  log_info("make-tiny: {} tensors, {} in {} shard(s) of at most {}", decls.size(),
           format_bytes(static_cast<double>(summary.tensor_bytes)), shards.size(),
           format_bytes(static_cast<double>(max_shard_bytes)));

  Progress progress("make-tiny", summary.tensor_bytes);
  std::vector<uint8_t> buffer(kGenerateChunkBytes);
  std::map<std::string, std::string> weight_map;
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string name = shard_file_name(static_cast<int>(s + 1), summary.shards);
    SafetensorsWriter writer(dir + "/" + name, shards[s], {{"format", "pt"}});
    for (const TensorDecl& d : writer.order()) {
      const auto& [spec, stored] = origin.at(d.name);
      write_random_tensor(writer, d, RandomTensorSource(*spec, stored, quant.scheme, model, seed),
                          buffer, pool, progress);
      weight_map[d.name] = name;
    }
    writer.finish();
  }
  progress.finish();
  write_safetensors_index(dir + "/model.safetensors.index.json", weight_map, summary.tensor_bytes);
  write_file_atomic(dir + "/config.json", config.dump(2) + "\n");
  if (hf_quant) write_file_atomic(dir + "/hf_quant_config.json", hf_quant->dump(2) + "\n");
  return summary;
}

}  // namespace minimax
