// quantize_checkpoint: BF16 checkpoint → one published quantized layout, shard by shard.
#include "checkpoint/quantize.h"

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/log.h"
#include "base/progress.h"
#include "checkpoint/model_config.h"
#include "checkpoint/tensor_table.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/weight_codec.h"
#include "formats/safetensors_writer.h"
#include "formats/tensor_store.h"

namespace minimax {

namespace fs = std::filesystem;

QuantScheme parse_quant_scheme(const std::string& text) {
  if (std::optional<QuantScheme> s = parse_quant_scheme_name(text)) return *s;
  std::string names;
  for (QuantScheme s : all_quant_schemes())
    names += (names.empty() ? "" : ", ") + std::string(quant_scheme_name(s));
  fail("--format: unknown format '{}' (expected one of {})", text, names);
}

void copy_side_files(const std::string& src_dir, const std::string& dst_dir) {
  for (const auto& entry : fs::directory_iterator(src_dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file()) continue;
    if (entry.path().extension() == ".safetensors" || name == "model.safetensors.index.json" ||
        name == "config.json" || name == "hf_quant_config.json") {
      continue;
    }
    fs::copy_file(entry.path(), fs::path(dst_dir) / name, fs::copy_options::overwrite_existing);
  }
}

QuantizeSummary quantize_checkpoint(const QuantizeOptions& options) {
  const ModelConfig model = load_model_config(options.input_dir);
  const QuantConfig source_quant = load_quant_config(options.input_dir);
  if (source_quant.scheme != QuantScheme::kNone) {
    fail("{}: quantize needs a BF16 checkpoint, this one is {}", options.input_dir,
         quant_scheme_name(source_quant.scheme));
  }
  // The target's own config decides what is quantized, so the file and the data agree.
  nlohmann::json config = model.raw;
  nlohmann::json qjson = quantization_config_json(options.scheme, model);
  std::optional<nlohmann::json> hf_quant;
  if (options.scheme != QuantScheme::kNone) config["quantization_config"] = qjson;
  // ModelOpt also writes its legacy hf_quant_config.json beside config.json.
  if (options.scheme == QuantScheme::kNvfp4) hf_quant = hf_quant_config_json(model);
  const QuantConfig target = detect_quantization(config, hf_quant, options.output_dir);

  std::map<std::string, TensorSpec> specs;
  for (TensorSpec& s : tensor_table(model)) specs.emplace(s.name, std::move(s));
  // MTP modules a checkpoint may carry are quantized like the decoder layers they copy (a release
  // quantizes every Linear its rules do not exclude), so the output's config describes them too.
  for (TensorSpec& s : mtp_tensor_specs(model, model.num_mtp_modules))
    specs.emplace(s.name, std::move(s));

  TensorStore source(options.input_dir);
  AtomicDirectory out(options.output_dir, options.force);
  QuantizeSummary summary;
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  std::optional<Progress> progress;
  if (options.show_progress) {
    uint64_t input = 0;
    for (size_t s = 0; s < source.num_shards(); ++s)
      for (const TensorInfo& info : source.shard(s).tensors()) input += info.nbytes();
    progress.emplace("quantize", input);
    progress->show_after(std::chrono::seconds(1));
  }
  for (size_t s = 0; s < source.num_shards(); ++s) {
    const SafetensorsFile& shard = source.shard(s);
    std::vector<TensorDecl> decls;
    std::map<std::string, std::vector<uint8_t>> data;
    for (const TensorInfo& info : shard.tensors()) {
      auto spec = specs.find(info.name);
      std::vector<StoredTensor> stored;
      if (spec != specs.end()) stored = stored_tensors(spec->second, target);
      const bool quantized = stored.size() > 1;
      summary.bytes_in += info.nbytes();
      if (progress) progress->add(info.nbytes());
      if (!quantized) {
        decls.push_back({info.name, info.dtype, info.shape});
        auto bytes = shard.data(info);
        data[info.name].assign(bytes.begin(), bytes.end());
        ++summary.tensors_copied;
        continue;
      }
      if (info.shape.size() != 2) fail("{}: tensor '{}' is not 2-D", shard.path(), info.name);
      auto values = read_as_float(TensorRef{&shard, &info});
      auto encoded =
          encode_weight(values, info.shape[0], info.shape[1], target.layout_of(info.name), stored);
      for (size_t i = 0; i < stored.size(); ++i) {
        decls.push_back({stored[i].name, stored[i].dtype, stored[i].shape});
        if (encoded[i].size() != decls.back().nbytes()) {
          fail("quantize: '{}' encoded to {} bytes, layout says {}", stored[i].name,
               encoded[i].size(), decls.back().nbytes());
        }
        data[stored[i].name] = std::move(encoded[i]);
      }
      ++summary.tensors_quantized;
    }
    const std::string& shard_name = source.shard_names()[s];
    SafetensorsWriter writer(out.file(shard_name), decls, {{"format", "pt"}});
    for (const TensorDecl& d : writer.order()) {
      writer.write_tensor(d.name, data[d.name]);
      weight_map[d.name] = shard_name;
      total += d.nbytes();
    }
    writer.finish();
    summary.bytes_out += writer.file_size();
  }
  if (progress) progress->finish();
  if (source.sharded())
    write_safetensors_index(out.file("model.safetensors.index.json"), weight_map, total);
  write_file_atomic(out.file("config.json"), config.dump(2) + "\n");
  if (hf_quant) write_file_atomic(out.file("hf_quant_config.json"), hf_quant->dump(2) + "\n");
  copy_side_files(options.input_dir, out.path());
  out.commit();
  log_info("quantize: {} tensors quantized to {}, {} copied", summary.tensors_quantized,
           quant_scheme_name(options.scheme), summary.tensors_copied);
  return summary;
}

}  // namespace minimax
