// An EAGLE-3 draft head (docs/eagle3.md): one Llama decoder layer that reads the target model's
// hidden states at three layers (fused by `fc`) together with the next token's embedding, and
// proposes the token after it. Loaded from the published layout (vLLM's llama_eagle3: fc,
// midlayer.*, norm, lm_head, d2t, t2d, optionally embed_tokens); anything else is refused by name.
// It runs through the target's kind of backend (its own instance: own workspace, own KV memory),
// so the target's step and the draft never share scratch.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "checkpoint/eagle3_config.h"
#include "formats/tensor_store.h"
#include "kernels/backend.h"
#include "model/model.h"

namespace minimax {

// One sequence's keys and values of the head's single layer, slot s at row s (contiguous; grown
// on demand). Slots are positions relative to where the sequence's drafting began.
class Eagle3Cache {
 public:
  int64_t capacity() const { return capacity_; }

 private:
  friend class Eagle3Head;
  DeviceBuffer k_, v_;
  int64_t capacity_ = 0;
};

class Eagle3Head {
 public:
  // Reads `dir` (config.json and the safetensors) for `target`, whose embedding it borrows when
  // the head has none; `target` must outlive the head. The head's numbers never reach the output
  // (its drafts are verified), so it runs the kernels that batch rows (faster over a prompt) even
  // when the target is batch-invariant, unless `batch_invariant` (tests comparing call shapes).
  static std::unique_ptr<Eagle3Head> load(const std::string& dir, const Model& target,
                                          bool batch_invariant = false);
  ~Eagle3Head();

  const Eagle3Config& config() const { return config_; }
  // Floats per row of the target's taps: 3 × target hidden size.
  int64_t tap_width() const;
  int64_t hidden_size() const { return config_.hidden_size; }

  // Runs T rows: token t at slot slots[t] (ascending, consecutive, so that slots [0, slots[t]]
  // are filled once this call's rows are written) with `hidden` [T, width]: the target's taps
  // (width = tap_width(), fused through fc) or the head's own previous output (width =
  // hidden_size(), a chained draft). Returns the most likely next token (a target id) after the
  // last row, and writes that row's pre-norm hidden state [hidden_size()] to `next_hidden`.
  int32_t forward(Eagle3Cache& cache, std::span<const int32_t> tokens,
                  std::span<const int32_t> slots, std::span<const float> hidden, int64_t width,
                  std::vector<float>& next_hidden);

  // One sequence's rows in a pass over several sequences (forward_batch): the arguments of
  // forward() above, and its two results.
  struct Rows {
    Eagle3Cache* cache = nullptr;
    std::span<const int32_t> tokens, slots;
    std::span<const float> hidden;  // [tokens.size(), width]
    std::vector<float>* next_hidden = nullptr;
    int32_t draft = -1;  // out: the most likely token after the last row
  };
  // forward() for several sequences in one pass, every row of the same `width`: the weights are
  // read once for all of them (a server step drafts for each of its sequences), attention stays
  // within each sequence's own cache.
  void forward_batch(std::span<Rows> batch, int64_t width);

 private:
  Eagle3Head() = default;
  void reserve(Eagle3Cache& cache, int64_t slots);

  Eagle3Config config_;
  std::unique_ptr<TensorStore> store_;
  std::vector<std::vector<uint8_t>> owned_;  // converted copies the views point into
  std::unique_ptr<Backend> backend_;
  ThreadPool* pool_ = nullptr;
  WeightView embedding_, fc_, q_, k_, v_, o_, gate_, up_, down_, lm_head_;
  std::vector<float> input_norm_, hidden_norm_, post_norm_, final_norm_;
  std::vector<int64_t> d2t_;  // target id = draft id + d2t[draft id]
};

}  // namespace minimax
