// Tiny random checkpoints: weights from the canonical tensor table, written in shards.
#include "checkpoint/tiny_checkpoint.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "base/atomic_output.h"
#include "base/error.h"
#include "base/progress.h"
#include "checkpoint/arch/architecture.h"
#include "checkpoint/quant_config.h"
#include "checkpoint/random_weights.h"
#include "checkpoint/tensor_table.h"
#include "formats/float_formats.h"
#include "formats/safetensors_writer.h"

namespace minimax {

NormalStream::NormalStream(uint64_t seed, const std::string& key) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the key, mixed with the seed
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  state_ = h ^ (seed * 0x9E3779B97F4A7C15ull);
}

uint64_t NormalStream::next_u64() {  // splitmix64
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double NormalStream::next() {  // Box–Muller, written out so results do not depend on the libc++
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = (static_cast<double>(next_u64() >> 11) + 1.0) / 9007199254740993.0;
  double u2 = static_cast<double>(next_u64() >> 11) / 9007199254740992.0;
  double r = std::sqrt(-2.0 * std::log(u1));
  spare_ = r * std::sin(2.0 * M_PI * u2);
  has_spare_ = true;
  return r * std::cos(2.0 * M_PI * u2);
}

namespace {

std::vector<uint8_t> random_tensor(const TensorSpec& spec, DType dtype, const ModelConfig& config,
                                   uint64_t seed) {
  auto [mean, stddev] = initial_distribution(spec, config);
  NormalStream rng(seed, spec.name);
  uint64_t n = 1;
  for (int64_t d : spec.shape) n *= d;
  std::vector<uint8_t> out(n * dtype_bits(dtype) / 8);
  for (uint64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(mean + stddev * rng.next());
    if (dtype == DType::kBF16) {
      uint16_t b = f32_to_bf16(v);
      std::memcpy(out.data() + 2 * i, &b, 2);
    } else if (dtype == DType::kF32) {
      std::memcpy(out.data() + 4 * i, &v, 4);
    } else {
      fail("tiny checkpoint: tensor '{}' stored as {} is not supported", spec.name,
           dtype_name(dtype));
    }
  }
  return out;
}

}  // namespace

std::vector<TensorSpec> mtp_tensor_specs(const ModelConfig& config, int count) {
  if (count < 0 || count > config.num_mtp_modules)
    fail("tiny checkpoint: {} MTP layers asked, the config has num_mtp_modules {}", count,
         config.num_mtp_modules);
  const std::string prefix(config.architecture_record().tensor_prefix);
  const std::string last = prefix + "layers." + std::to_string(config.num_layers - 1) + ".";
  std::vector<TensorSpec> specs;
  for (int i = 0; i < count; ++i) {
    const std::string module =
        config.arch == Arch::kM2 ? prefix + "layers." + std::to_string(config.num_layers + i) + "."
                                 : prefix + "mtp.layers." + std::to_string(i) + ".";
    for (const TensorSpec& spec : tensor_table(config)) {
      if (spec.name.rfind(last, 0) != 0) continue;
      TensorSpec copy = spec;
      copy.name = module + spec.name.substr(last.size());
      copy.layer = -1;
      specs.push_back(std::move(copy));
    }
    const int64_t h = config.hidden_size;
    for (const char* norm : {"enorm.weight", "hnorm.weight"}) {
      TensorSpec s;
      s.name = module + norm;
      s.role = TensorRole::kNorm;
      s.shape = {h};
      specs.push_back(std::move(s));
    }
    TensorSpec eh;
    eh.name = module + "eh_proj.weight";
    eh.role = TensorRole::kMtp;
    eh.shape = {h, 2 * h};
    eh.linear = true;
    specs.push_back(std::move(eh));
  }
  return specs;
}

void write_tiny_weights(const ModelConfig& config, const std::string& dir, uint64_t seed,
                        int min_shards, int mtp_layers, bool show_progress) {
  QuantConfig none;
  none.scheme = QuantScheme::kNone;
  std::vector<TensorDecl> decls;
  std::map<std::string, TensorSpec> specs;
  std::vector<TensorSpec> all = tensor_table(config);
  for (TensorSpec& spec : mtp_tensor_specs(config, mtp_layers)) all.push_back(std::move(spec));
  for (const TensorSpec& spec : all) {
    auto stored = stored_tensors(spec, none);
    if (stored.size() != 1) fail("tiny checkpoint: '{}' is not stored as one tensor", spec.name);
    decls.push_back({stored[0].name, stored[0].dtype, stored[0].shape});
    specs.emplace(spec.name, spec);
  }
  auto shards = plan_shards(decls, UINT64_MAX, min_shards);
  std::map<std::string, std::string> weight_map;
  uint64_t total = 0;
  std::optional<Progress> progress;
  if (show_progress) {
    uint64_t bytes = 0;
    for (const TensorDecl& d : decls) bytes += d.nbytes();
    progress.emplace("make-tiny", bytes);
    progress->show_after(std::chrono::seconds(1));
  }
  for (size_t s = 0; s < shards.size(); ++s) {
    const std::string name =
        shard_file_name(static_cast<int>(s + 1), static_cast<int>(shards.size()));
    SafetensorsWriter writer(dir + "/" + name, shards[s], {{"format", "pt"}});
    for (const TensorDecl& d : writer.order()) {
      writer.write_tensor(d.name, random_tensor(specs.at(d.name), d.dtype, config, seed));
      weight_map[d.name] = name;
      total += d.nbytes();
      if (progress) progress->add(d.nbytes());
    }
    writer.finish();
  }
  if (progress) progress->finish();
  write_safetensors_index(dir + "/model.safetensors.index.json", weight_map, total);
  write_file_atomic(dir + "/config.json", config.raw.dump(2) + "\n");
}

}  // namespace minimax
