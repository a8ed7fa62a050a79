// Fixtures of the runtime tests: a byte tokenizer (id b is byte b), a scripted logits source, and
// tiny checkpoint directories with their text files, built once per test process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/model_config.h"
#include "runtime/generator.h"
#include "text/bpe_tokenizer.h"

namespace minimax::runtime_test {

// Byte-level BPE without merges plus the MiniMax special tokens: ids 0..255 are the bytes.
const BpeTokenizer& byte_tokenizer();
// The ids of `text` under byte_tokenizer(): one per byte.
std::vector<int32_t> byte_ids(std::string_view text);

// Logits that make script[i] the clear argmax at generated index i (0 after the prefill), and
// token 0 once the script is exhausted. Records what it was fed.
class ScriptedSource : public LogitsSource {
 public:
  ScriptedSource(std::vector<int32_t> script, int vocab, int64_t capacity = 1 << 20);
  std::vector<float> prefill(std::span<const int32_t> prompt) override;
  std::vector<float> decode(int32_t token) override;
  int64_t capacity() const override { return capacity_; }

  std::vector<int32_t> fed;  // every token passed in, prompt first
  int prefills = 0, decodes = 0;

 private:
  std::vector<float> next();
  std::vector<int32_t> script_;
  int vocab_;
  int64_t capacity_;
  size_t index_ = 0;
};

// Logits that depend only on the sequence length: a fixed pseudo-random distribution per
// position over `vocab` tokens (for sampling determinism).
class NoisySource : public LogitsSource {
 public:
  explicit NoisySource(int vocab) : vocab_(vocab) {}
  std::vector<float> prefill(std::span<const int32_t> prompt) override;
  std::vector<float> decode(int32_t token) override;
  int64_t capacity() const override { return 1 << 20; }

 private:
  std::vector<float> at(int64_t length) const;
  int vocab_;
  int64_t length_ = 0;
};

// A tiny bf16 checkpoint of `arch` with tokenizer.json, tokenizer_config.json (chat template,
// bos/eos) and generation_config.json, as `minimax make-tiny` writes them.
std::string tiny_model_dir(Arch arch);
// A fresh, not yet existing path under the test process's scratch directory.
std::string scratch_path(const std::string& name);

}  // namespace minimax::runtime_test
