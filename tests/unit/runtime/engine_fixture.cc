// The engine tests' fixture (engine_fixture.h).
#include "engine_fixture.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "checkpoint/tiny_checkpoint.h"
#include "checkpoint/tiny_config.h"
#include "text/bpe_trainer.h"

namespace minimax::engine_test {
namespace fs = std::filesystem;

TinyModel& tiny(Arch arch, bool invariant) {
  static std::mutex mutex;
  static std::map<std::pair<Arch, bool>, TinyModel> built;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = built.find({arch, invariant}); it != built.end()) return it->second;
  const std::string dir = ::testing::TempDir() + "minimax_engine_test_" +
                          std::to_string(::getpid()) + (arch == Arch::kM2 ? "_m2" : "_m3") +
                          (invariant ? "_bi" : "");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::string> corpus = {
      "The quick brown fox jumps over the lazy dog. What is 12 + 35? The answer is 47.",
      "You are a helpful assistant. Let me think step by step about the question."};
  TinyModel tiny_model;
  tiny_model.tokenizer = std::make_unique<BpeTokenizer>(BpeTokenizer::from_json(
      train_byte_level_bpe(corpus, 320, minimax_special_tokens()), "engine test tokenizer"));
  const int vocab = (tiny_model.tokenizer->vocab_size() + 63) / 64 * 64;
  write_tiny_weights(parse_model_config(tiny_config_json(arch, vocab), "tiny config"), dir, 11);
  ModelOptions options;
  options.threads = 1;
  if (invariant) {
    options.threads = 2;
    options.cpu.activations = ActivationPrecision::kBF16x2;
    options.cpu.batch_invariant = true;
  }
  tiny_model.model = Model::load(dir, options);
  fs::remove_all(dir);  // the weights are read at load
  return built.emplace(std::make_pair(arch, invariant), std::move(tiny_model)).first->second;
}

std::vector<int32_t> prompt_ids(int n, int salt) {
  std::vector<int32_t> ids(n);
  for (int i = 0; i < n; ++i) ids[i] = (i * 37 + salt * 101 + 11) % 256;
  return ids;
}

EngineRequest greedy_request(std::vector<int32_t> prompt, int64_t max_tokens) {
  EngineRequest request;
  request.prompt = std::move(prompt);
  request.sampling.temperature = 0.0f;
  request.stop.max_tokens = max_tokens;
  return request;
}

bool absorb(Collected& out, const EngineEvent& event) {
  ++out.events;
  if (!event.prompt_logprobs.empty()) {
    EXPECT_TRUE(out.prompt_logprobs.empty()) << "prompt logprobs sent twice";
    EXPECT_TRUE(out.tokens.empty()) << "prompt logprobs after a token";
    out.prompt_logprobs = event.prompt_logprobs;
  }
  for (const TokenOutput& token : event.tokens) {
    out.tokens.push_back(token.token);
    out.text += token.text;
    if (token.has_logprobs) out.logprobs.push_back(token.logprobs);
  }
  out.prompt_tokens = event.prompt_tokens;
  out.cached_prompt_tokens = event.cached_prompt_tokens;
  out.completion_tokens = event.completion_tokens;
  if (!event.finished) return false;
  out.finish_reason = event.finish_reason;
  out.stop_string = event.stop_string;
  out.stop_token = event.stop_token;
  out.error = event.error;
  return true;
}

Collected collect(RequestStream& stream, Collected out) {
  EngineEvent event;
  while (stream.wait(event, std::chrono::seconds(120))) {
    if (absorb(out, event)) {
      EXPECT_FALSE(stream.wait(event, std::chrono::milliseconds(0)));
      return out;
    }
  }
  ADD_FAILURE() << "the stream did not finish";
  return out;
}

}  // namespace minimax::engine_test
