// The generation loop of one sequence: prompt ids in, sampled tokens out one at a time through a
// callback, until an end-of-sequence id, a stop string (matched on the decoded text across token
// boundaries, never shown), the token limit or the end of the context. The logits come from a
// LogitsSource, so the loop runs the same over a model (runtime/model_session.h) or a test fake.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/eagle3_head.h"
#include "runtime/sampler.h"
#include "runtime/spec/draft_policy.h"
#include "runtime/spec/speculative_config.h"
#include "text/bpe_tokenizer.h"

namespace minimax {

// Where next-token logits come from: one sequence whose tokens are fed in order.
class LogitsSource {
 public:
  virtual ~LogitsSource() = default;
  // Makes `prompt` the whole sequence (a source may keep a common prefix it already holds) and
  // returns the logits after its last token. `prompt` is not empty.
  virtual std::vector<float> prefill(std::span<const int32_t> prompt) = 0;
  // Appends one token to the sequence and returns the logits after it.
  virtual std::vector<float> decode(int32_t token) = 0;
  // Appends `tokens` and returns the logits after each of them, one row per token (a verify
  // pass of speculative decoding). The default decodes them one at a time.
  virtual std::vector<float> decode_all(std::span<const int32_t> tokens);
  // Forgets the tokens from position `length` on (rejected draft tokens); `length` is at most the
  // number of tokens held. Sources that cannot roll back refuse speculative decoding here.
  virtual void truncate(int64_t length);
  // Receives, after every forward pass, the positions it ran and the model's hidden-state taps of
  // them (Model::hidden_taps rows), for an EAGLE-3 drafter; an empty function stops it. Sources
  // without a model refuse here.
  using TapSink = std::function<void(int64_t first, int64_t count, std::span<const float> taps)>;
  virtual void set_tap_sink(TapSink sink);
  // The most tokens the sequence can hold.
  virtual int64_t capacity() const = 0;
  // Prompt tokens the last prefill took from what the source already held (not recomputed).
  virtual int64_t reused_prefix() const { return 0; }
};

enum class FinishReason : uint8_t {
  kStop,       // an end-of-sequence id or a stop string
  kLength,     // max_tokens generated, or the context is full
  kCancelled,  // the callback asked to stop
};
std::string_view finish_reason_name(FinishReason reason);  // "stop", "length", "cancelled"

struct StopConditions {
  // Ids that end the sequence (EOS); such a token is part of `tokens` but adds no text.
  std::vector<int32_t> stop_token_ids;
  // Strings that end the sequence when they appear in the output text; neither the string nor
  // anything after it is shown.
  std::vector<std::string> stop_strings;
  int64_t max_tokens = 256;  // must be > 0
};

// One sampled token as the callback sees it.
struct GenerationEvent {
  int32_t token = 0;
  int64_t index = 0;  // 0 for the first generated token
  // Text that became final with this token: may be empty (an incomplete UTF-8 character or a
  // possible stop string is held back) or hold text of earlier tokens.
  std::string text;
  bool has_logprobs = false;
  SampleLogprobs logprobs;
  bool last = false;  // the loop ends after this event
};
// Returns false to stop the generation (finish reason kCancelled).
using GenerationCallback = std::function<bool(const GenerationEvent&)>;

struct GenerationStats {
  // Speculative decoding (Generator::enable_speculation): verify steps that carried draft tokens,
  // the draft tokens carried and those accepted.
  int64_t spec_drafts = 0, spec_draft_tokens = 0, spec_accepted_tokens = 0;
  int64_t prompt_tokens = 0;
  int64_t reused_prompt_tokens = 0;  // of which taken from the source's cache
  int64_t generated_tokens = 0;
  // Forward passes after the prefill: one per token but the first, fewer with speculation.
  int64_t decode_steps = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;  // from the end of the prefill to the last token
};

struct GenerationResult {
  std::vector<int32_t> tokens;  // every sampled id, including a final EOS
  std::string text;             // the concatenation of every event's text
  FinishReason finish = FinishReason::kLength;
  int32_t stop_token = -1;  // the EOS id that ended it, or -1
  std::string stop_string;  // the stop string that ended it, or ""
  GenerationStats stats;
};

class Generator {
 public:
  // With `skip_special_tokens`, special tokens add no text (HF's decode(..., True)); off by
  // default so that reasoning markers stay visible to the caller.
  Generator(LogitsSource& source, const BpeTokenizer& tokenizer, bool skip_special_tokens = false);

  // Errors (naming the parameter): an empty prompt, max_tokens <= 0, a prompt longer than the
  // source's capacity, bad sampling parameters or stop strings.
  GenerationResult generate(std::span<const int32_t> prompt, const SamplingParams& sampling,
                            const StopConditions& stop, const GenerationCallback& on_token = {},
                            bool want_logprobs = false);

  // Decodes with draft-free speculation from now on (the source must support truncate()). The
  // output is the plain loop's only when the source's logits are batch-invariant, which the
  // commands ensure by turning --batch-invariant on. `cost` is the model's step cost model.
  // `head`: the loaded EAGLE-3 head for method eagle3 (runtime/spec/draft_head.h), else null.
  void enable_speculation(const SpeculativeConfig& config, StepCostModel cost,
                          std::shared_ptr<Eagle3Head> head = nullptr);

 private:
  LogitsSource& source_;
  std::optional<SpeculativeConfig> spec_;
  std::unique_ptr<StepCostModel> cost_;  // step times persist across generate() calls (chat)
  std::shared_ptr<Eagle3Head> head_;
  BpeTokenizer tokenizer_;
  bool skip_special_;
};

}  // namespace minimax
