// Runtime test fixtures (runtime_fixture.h).
#include "runtime_fixture.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "scratch_dir.h"
#include "text/bpe_trainer.h"
#include "text/jinja/builtin_templates.h"

namespace minimax::runtime_test {
namespace fs = std::filesystem;
namespace {

std::string scratch_root() { return process_scratch_root("minimax_runtime_test"); }

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

std::string scratch_path(const std::string& name) {
  return process_scratch_path("minimax_runtime_test", name);
}

const BpeTokenizer& byte_tokenizer() {
  static const BpeTokenizer tokenizer = BpeTokenizer::from_json(
      train_byte_level_bpe({"a"}, 256, minimax_special_tokens()), "byte tokenizer");
  return tokenizer;
}

std::vector<int32_t> byte_ids(std::string_view text) {
  std::vector<int32_t> ids;
  for (unsigned char c : text) ids.push_back(c);
  return ids;
}

ScriptedSource::ScriptedSource(std::vector<int32_t> script, int vocab, int64_t capacity)
    : script_(std::move(script)), vocab_(vocab), capacity_(capacity) {}

std::vector<float> ScriptedSource::next() {
  std::vector<float> logits(vocab_, 0.0f);
  const int32_t want = index_ < script_.size() ? script_[index_] : 0;
  logits[want] = 20.0f;
  ++index_;
  return logits;
}

std::vector<float> ScriptedSource::prefill(std::span<const int32_t> prompt) {
  ++prefills;
  fed.assign(prompt.begin(), prompt.end());
  index_ = 0;
  return next();
}

std::vector<float> ScriptedSource::decode(int32_t token) {
  ++decodes;
  fed.push_back(token);
  return next();
}

std::vector<float> NoisySource::at(int64_t length) const {
  std::vector<float> logits(vocab_);
  uint64_t state = 0x1234567ull + static_cast<uint64_t>(length) * 0x9E3779B97F4A7C15ull;
  for (float& l : logits) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    l = static_cast<float>((state >> 40) % 1000) / 250.0f;  // in [0, 4): a spread distribution
  }
  return logits;
}

std::vector<float> NoisySource::prefill(std::span<const int32_t> prompt) {
  length_ = static_cast<int64_t>(prompt.size());
  return at(length_);
}

std::vector<float> NoisySource::decode(int32_t) { return at(++length_); }

std::string tiny_model_dir(Arch arch) {
  static std::mutex mutex;
  static std::map<Arch, std::string> built;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = built.find(arch); it != built.end()) return it->second;
  const std::string dir = scratch_root() + (arch == Arch::kM2 ? "/tiny-m2" : "/tiny-m3");
  fs::create_directories(dir);
  const std::vector<std::string> corpus = {
      "The quick brown fox jumps over the lazy dog. What is 12 + 35? The answer is 47.",
      "You are a helpful assistant.\nsystem\nuser\nai\n Let me think step by step."};
  const nlohmann::json tokenizer_json = train_byte_level_bpe(corpus, 320, minimax_special_tokens());
  write(dir + "/tokenizer.json", tokenizer_json.dump());
  const BpeTokenizer tokenizer = BpeTokenizer::from_json(tokenizer_json, dir);
  const int vocab = (tokenizer.vocab_size() + 63) / 64 * 64;
  write_tiny_weights(parse_model_config(tiny_config_json(arch, vocab), "tiny config"), dir, 7);
  const nlohmann::json tokenizer_config = {
      {"bos_token", "]~!b["},
      {"eos_token", "[e~["},
      {"chat_template",
       std::string(*builtin_chat_template(arch == Arch::kM2 ? "minimax_m2" : "minimax_m3"))}};
  write(dir + "/tokenizer_config.json", tokenizer_config.dump());
  const nlohmann::json generation = {{"eos_token_id", *tokenizer.token_id("[e~[")},
                                     {"temperature", 0.7},
                                     {"top_p", 0.9},
                                     {"top_k", 20}};
  write(dir + "/generation_config.json", generation.dump());
  built.emplace(arch, dir);
  return dir;
}

}  // namespace minimax::runtime_test
