// Windows of a text through the model, scored (runtime/perplexity.h).
#include "runtime/perplexity.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "runtime/prefill_chunk.h"

namespace minimax {
namespace {

// One window's scored rows of logits against the tokens that follow them.
class WindowScorer {
 public:
  WindowScorer(PerplexityResult& result, KlBaseWriter* write, const KlBaseReader* compare)
      : result_(result), write_(write), compare_(compare) {
    if (compare_) result_.comparison.emplace();
  }

  void score(std::span<const float> logits, int32_t next) {
    if (compare_) {
      const PositionLogprobs base = compare_->position(position_);
      const PositionLogprobs run = logprobs_over(logits, base.ids, next);
      result_.nll.add(-static_cast<double>(run.next_logprob));
      result_.comparison->add(base, run, argmax_id(logits));
    } else {
      const uint32_t k = write_ ? write_->header().top_k : 0;
      const PositionLogprobs run =
          logprobs_over(logits, top_k_ids(logits, static_cast<int>(k)), next);
      result_.nll.add(-static_cast<double>(run.next_logprob));
      if (write_) write_->add(run);
    }
    ++position_;
  }

 private:
  PerplexityResult& result_;
  KlBaseWriter* write_;
  const KlBaseReader* compare_;
  uint64_t position_ = 0;
};

}  // namespace

PerplexityWindows plan_perplexity_windows(int64_t token_count, int64_t context) {
  if (context < 4)
    fail(
        "a window of {} tokens is too small: it needs at least 4 (half of it is context, and "
        "its last token is not predicted from)",
        context);
  if (token_count < context)
    fail("the text is {} tokens; one window of {} tokens needs at least {}", token_count, context,
         context);
  PerplexityWindows w;
  w.context = context;
  w.windows = token_count / context;
  w.first = context / 2;
  w.scored_per_window = context - 1 - w.first;
  return w;
}

std::vector<int32_t> perplexity_tokens(std::string_view text, const BpeTokenizer& tokenizer,
                                       const CheckpointText& settings) {
  std::vector<int32_t> ids;
  if (settings.add_bos_token) {
    if (!settings.bos_token_id)
      fail("tokenizer_config.json: add_bos_token is true but bos_token '{}' is not a token of {}",
           settings.bos_token, tokenizer.source());
    ids.push_back(*settings.bos_token_id);
  }
  const std::vector<int32_t> body = tokenizer.encode(text);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

KlBaseHeader perplexity_base_header(const PerplexityWindows& windows,
                                    std::span<const int32_t> tokens, int64_t vocab,
                                    uint32_t top_k) {
  KlBaseHeader h;
  h.top_k = top_k;
  h.vocab = static_cast<uint64_t>(vocab);
  h.context = static_cast<uint64_t>(windows.context);
  h.token_count = tokens.size();
  h.tokens_hash = hash_token_ids(tokens);
  h.windows = static_cast<uint64_t>(windows.windows);
  h.positions = static_cast<uint64_t>(windows.positions());
  return h;
}

PerplexityResult run_perplexity(Model& model, std::span<const int32_t> tokens,
                                const PerplexityOptions& options, KlBaseWriter* write,
                                const KlBaseReader* compare,
                                const std::function<void(int64_t)>& on_window) {
  if (write && compare) fail("perplexity: a run either writes a base or compares with one");
  PerplexityResult result;
  const PerplexityWindows w =
      plan_perplexity_windows(static_cast<int64_t>(tokens.size()), options.context);
  result.windows = w;
  const int64_t vocab = model.weights().vocab_size;
  const KlBaseHeader header = perplexity_base_header(w, tokens, vocab, 0);
  if (write && write->header().positions != header.positions)
    fail("perplexity: the base being written expects {} positions; this run scores {}",
         write->header().positions, header.positions);
  if (compare) compare->check_matches(header);

  // Rows of logits per call in the scored half: bounded in bytes, and no more than a prefill
  // chunk (the logits of a position do not depend on how its window is split into calls).
  const int64_t rows =
      std::clamp<int64_t>(options.max_logits_bytes / (vocab * static_cast<int64_t>(sizeof(float))),
                          1, kDefaultPrefillChunk);
  KvCache cache = model.new_cache(w.context, options.kv_dtype);
  std::vector<int32_t> window(static_cast<size_t>(w.context)), positions(window.size());
  std::iota(positions.begin(), positions.end(), 0);
  WindowScorer scorer(result, write, compare);

  for (int64_t index = 0; index < w.windows; ++index) {
    std::copy_n(tokens.begin() + index * w.context, w.context, window.begin());
    if (options.window_bos) window[0] = *options.window_bos;
    cache.clear();
    // The context half only fills the cache.
    for (int64_t start = 0; start < w.first; start += kDefaultPrefillChunk) {
      const int64_t n = std::min(kDefaultPrefillChunk, w.first - start);
      model.forward(std::span(window).subspan(start, n), std::span(positions).subspan(start, n),
                    cache, LogitsFor::kLastToken);
    }
    // The scored half: the logits at position p predict the token at p + 1, so the window's last
    // token is never run.
    for (int64_t start = w.first; start < w.context - 1; start += rows) {
      const int64_t n = std::min(rows, w.context - 1 - start);
      const std::vector<float> logits =
          model.forward(std::span(window).subspan(start, n), std::span(positions).subspan(start, n),
                        cache, LogitsFor::kAllTokens);
      for (int64_t r = 0; r < n; ++r)
        scorer.score(std::span(logits).subspan(r * vocab, vocab), window[start + r + 1]);
    }
    if (on_window) on_window(index + 1);
  }
  return result;
}

}  // namespace minimax
