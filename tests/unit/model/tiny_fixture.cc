// Tiny checkpoint and golden fixtures shared by the model tests.
#include "tiny_fixture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "base/error.h"
#include "checkpoint/quantize.h"
#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "model/model.h"
#include "scratch_dir.h"

namespace minimax::testing_support {
namespace fs = std::filesystem;
namespace {

std::string scratch_root() { return process_scratch_root("minimax_model_test"); }

}  // namespace

nlohmann::json msa_release_geometry_config_json(int vocab_size) {
  nlohmann::json config = tiny_config_json(Arch::kM3, vocab_size);
  nlohmann::json& text = config["text_config"];
  text["num_key_value_heads"] = 4;  // one index head per KV group (§5.3)
  nlohmann::json& sparse = text["sparse_attention_config"];
  sparse["sparse_num_index_heads"] = 4;
  sparse["sparse_block_size"] = 128;
  sparse["sparse_topk_blocks"] = 16;
  sparse["sparse_local_block"] = 1;
  sparse["sparse_init_block"] = 0;
  return config;
}

std::string scratch_path(const std::string& name) {
  return process_scratch_path("minimax_model_test", name);
}

std::string tiny_checkpoint(Arch arch, QuantScheme scheme, uint64_t seed, int vocab_size) {
  static std::mutex mutex;
  static std::map<std::string, std::string> built;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string key = fmt::format("{}-{}-{}-{}", arch == Arch::kM2 ? "m2" : "m3",
                                      quant_scheme_name(scheme), seed, vocab_size);
  if (auto it = built.find(key); it != built.end()) return it->second;
  const std::string dir = scratch_root() + "/" + key;
  const std::string bf16_dir = scheme == QuantScheme::kNone ? dir : dir + ".bf16";
  fs::create_directories(bf16_dir);
  // The same two steps as `minimax make-tiny`: random BF16 weights, then the quantizer.
  const ModelConfig config = parse_model_config(tiny_config_json(arch, vocab_size), "tiny config");
  write_tiny_weights(config, bf16_dir, seed);
  if (scheme != QuantScheme::kNone) {
    quantize_checkpoint(QuantizeOptions{bf16_dir, dir, scheme, false});
    fs::remove_all(bf16_dir);
  }
  built.emplace(key, dir);
  return dir;
}

std::string fnv1a64_of_shards(const std::string& dir) {
  std::vector<std::string> shards;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".safetensors") shards.push_back(entry.path().string());
  std::sort(shards.begin(), shards.end());
  uint64_t h = 0xCBF29CE484222325ull;
  for (const std::string& shard : shards) {
    std::ifstream in(shard, std::ios::binary);
    char c;
    while (in.get(c)) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
  }
  return fmt::format("{:016x}", h);
}

nlohmann::json load_golden(const std::string& name) {
  const std::string path = std::string(MINIMAX_TEST_DATA) + "/golden/" + name + ".json";
  std::ifstream in(path);
  if (!in) fail("golden file {} is missing", path);
  return nlohmann::json::parse(in);
}

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(std::string(MINIMAX_TEST_DATA) + "/golden"))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

Arch golden_arch(const nlohmann::json& golden) {
  return golden.at("arch").get<std::string>() == "m2" ? Arch::kM2 : Arch::kM3;
}

QuantScheme golden_scheme(const nlohmann::json& golden) {
  auto scheme = parse_quant_scheme_name(golden.at("format").get<std::string>());
  if (!scheme) fail("golden {}: unknown format", golden.at("case").get<std::string>());
  return *scheme;
}

std::string golden_checkpoint(const nlohmann::json& golden) {
  const std::string dir =
      tiny_checkpoint(golden_arch(golden), golden_scheme(golden), golden.at("seed").get<uint64_t>(),
                      golden.at("vocab_size").get<int>());
  const std::string hash = fnv1a64_of_shards(dir);
  if (hash != golden.at("checkpoint_fnv1a64").get<std::string>())
    fail(
        "golden {}: the regenerated checkpoint hashes to {}, the golden was made from {} "
        "(make-tiny or the quantizer changed: rerun tools/reference/make_goldens.py)",
        golden.at("case").get<std::string>(), hash,
        golden.at("checkpoint_fnv1a64").get<std::string>());
  return dir;
}

std::vector<int32_t> iota_positions(size_t n) {
  std::vector<int32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(i);
  return p;
}

std::vector<float> golden_forward(const nlohmann::json& golden, BackendKind backend, KvDtype dtype,
                                  ActivationPrecision activations, bool batch_invariant) {
  ModelOptions options;
  options.backend = backend;
  options.cpu.activations = activations;
  options.cpu.batch_invariant = batch_invariant;
  options.threads = 2;
  auto model = Model::load(golden_checkpoint(golden), options);
  const auto tokens = golden.at("tokens").get<std::vector<int32_t>>();
  KvCache cache = model->new_cache(static_cast<int64_t>(tokens.size()), dtype);
  EXPECT_EQ(cache.dtype(), dtype);
  return model->forward(tokens, iota_positions(tokens.size()), cache, LogitsFor::kAllTokens);
}

double golden_distance(const std::vector<float>& logits, const nlohmann::json& golden) {
  const int64_t vocab = golden.at("vocab_size").get<int64_t>();
  double worst = 0;
  for (const auto& check : golden.at("checked")) {
    const float* row = logits.data() + check.at("position").get<int64_t>() * vocab;
    const auto ids = check.at("top_ids").get<std::vector<int64_t>>();
    for (size_t k = 0; k < ids.size(); ++k)
      worst = std::max(worst, std::fabs(row[ids[k]] - check.at("top_logits")[k].get<double>()));
  }
  const float* last = logits.data() + logits.size() - vocab;
  for (int64_t i = 0; i < vocab; ++i)
    worst = std::max(worst, std::fabs(last[i] - golden.at("last_logits")[i].get<double>()));
  return worst;
}

int64_t last_argmax(const std::vector<float>& logits, const nlohmann::json& golden) {
  const int64_t vocab = golden.at("vocab_size").get<int64_t>();
  const float* last = logits.data() + logits.size() - vocab;
  return std::max_element(last, last + vocab) - last;
}

int64_t golden_last_argmax(const nlohmann::json& golden) {
  const auto& last = golden.at("last_logits");
  int64_t best = 0;
  for (int64_t i = 1; i < static_cast<int64_t>(last.size()); ++i)
    if (last[i].get<double>() > last[best].get<double>()) best = i;
  return best;
}

}  // namespace minimax::testing_support
