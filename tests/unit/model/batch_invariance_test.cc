// Issue 35: the logits of a position are the same bits however the position is computed. The
// same prompt positions run
//   - one token per call (decode), the reference of every comparison;
//   - in calls of k tokens (a speculative verify: k = 4, 8, 16) and prefill chunks (3, 7, 64, the
//     whole prompt), every row's logits kept;
//   - split where a prefix-cache hit would split it (the first 40 tokens, then the rest);
//   - in a batch beside another sequence (paged caches of one pool), decoding while the other
//     prefills and prefilling while the other decodes;
//   - on 1 thread instead of 2;
// for M2 and M3 (the prompt runs past M3's MSA block cut of top_k · block = 64 positions, so the
// later positions choose blocks), every weight layout, every KV cache type, and the activation
// precisions that keep one arithmetic at every call size (f32, bf16x2, bf16: the *-batches modes
// switch with the call size and make no such promise). Each comparison is byte for byte; a case
// that differs prints, per way, the largest |difference| and the first position that differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "model/model.h"
#include "tiny_fixture.h"

namespace minimax {
namespace {

constexpr int kVocab = 576;

struct InvarianceCase {
  Arch arch;
  QuantScheme scheme;
  KvDtype kv;
  ActivationPrecision activations;
  MoePath moe_path = MoePath::kFast;
};

std::string case_name(const InvarianceCase& c) {
  std::string name =
      std::string(arch_name(c.arch)) + "_" + std::string(quant_scheme_name(c.scheme)) + "_kv" +
      std::string(kv_dtype_name(c.kv)) + "_" + activation_precision_name(c.activations) +
      (c.moe_path == MoePath::kDequant ? "_dequant" : "");
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

std::vector<InvarianceCase> cases() {
  std::vector<InvarianceCase> out;
  for (Arch arch : {Arch::kM2, Arch::kM3})
    for (QuantScheme scheme : {QuantScheme::kNone, QuantScheme::kFp8Block, QuantScheme::kFp8Channel,
                               QuantScheme::kMxfp4, QuantScheme::kNvfp4, QuantScheme::kMxfp8})
      for (KvDtype kv : {KvDtype::kF32, KvDtype::kBF16, KvDtype::kFp8E4m3})
        for (ActivationPrecision p :
             {ActivationPrecision::kF32, ActivationPrecision::kBF16x2, ActivationPrecision::kBF16})
          out.push_back({arch, scheme, kv, p});
  // The MoE path that decodes experts to bf16 at load.
  for (Arch arch : {Arch::kM2, Arch::kM3})
    for (QuantScheme scheme : {QuantScheme::kFp8Block, QuantScheme::kMxfp4})
      for (ActivationPrecision p :
           {ActivationPrecision::kF32, ActivationPrecision::kBF16x2, ActivationPrecision::kBF16})
        out.push_back({arch, scheme, KvDtype::kF32, p, MoePath::kDequant});
  return out;
}

// Every row's logits of `prompt` run in calls whose sizes cycle through `chunks`.
std::vector<float> run_chunked(Model& model, const std::vector<int32_t>& prompt,
                               const std::vector<int>& chunks, KvDtype kv) {
  const int64_t n = static_cast<int64_t>(prompt.size());
  KvCache cache = model.new_cache(n, kv);
  std::vector<float> logits;
  int64_t at = 0;
  for (size_t i = 0; at < n; ++i) {
    const int64_t len = std::min<int64_t>(chunks[i % chunks.size()], n - at);
    const auto positions =
        testing_support::token_range(static_cast<int32_t>(at), static_cast<int32_t>(at + len));
    const auto rows = model.forward({prompt.data() + at, static_cast<size_t>(len)}, positions,
                                    cache, LogitsFor::kAllTokens);
    logits.insert(logits.end(), rows.begin(), rows.end());
    at += len;
  }
  return logits;
}

// `prompt` in calls cycling through `chunks`, each call one batch with the next `other_chunks`
// tokens of `other` (another sequence, while it lasts); paged caches of one pool, their blocks
// interleaved. Returns the rows of `prompt` alone.
std::vector<float> run_beside(Model& model, const std::vector<int32_t>& prompt,
                              const std::vector<int>& chunks, const std::vector<int32_t>& other,
                              const std::vector<int>& other_chunks, KvDtype kv) {
  constexpr int64_t kBlock = 16;
  const int64_t n = static_cast<int64_t>(prompt.size()), m = static_cast<int64_t>(other.size());
  const int64_t blocks_a = (n + kBlock - 1) / kBlock, blocks_b = (m + kBlock - 1) / kBlock;
  auto pool = model.new_kv_pool(blocks_a + blocks_b + 1, kBlock, kv);
  std::vector<int32_t> table_a, table_b;
  for (int64_t b = 0; b < blocks_a; ++b) table_a.push_back(static_cast<int32_t>(2 * b + 1));
  for (int64_t b = 0, next = 0; b < blocks_b; ++b) {
    while (std::find(table_a.begin(), table_a.end(), next) != table_a.end()) ++next;
    table_b.push_back(static_cast<int32_t>(next++));
  }
  KvCache a(*pool, table_a), b(*pool, table_b);
  const int64_t vocab = model.config().vocab_size;
  std::vector<float> logits;
  int64_t at = 0, bt = 0;
  for (size_t i = 0; at < n; ++i) {
    const int64_t len = std::min<int64_t>(chunks[i % chunks.size()], n - at);
    const int64_t blen = std::min<int64_t>(other_chunks[i % other_chunks.size()], m - bt);
    const auto pa =
        testing_support::token_range(static_cast<int32_t>(at), static_cast<int32_t>(at + len));
    const auto pb =
        testing_support::token_range(static_cast<int32_t>(bt), static_cast<int32_t>(bt + blen));
    std::vector<BatchSequence> batch;
    // The other sequence goes first when its index is odd, so both orders are seen.
    const BatchSequence sa{
        {prompt.data() + at, static_cast<size_t>(len)}, pa, &a, LogitsFor::kAllTokens};
    const BatchSequence sb{
        {other.data() + bt, static_cast<size_t>(blen)}, pb, &b, LogitsFor::kLastToken};
    const bool other_first = blen > 0 && i % 2 == 1;
    if (other_first) batch.push_back(sb);
    batch.push_back(sa);
    if (blen > 0 && !other_first) batch.push_back(sb);
    const auto rows = model.forward_batch(batch);
    const int64_t skip = other_first ? vocab : 0;
    logits.insert(logits.end(), rows.begin() + skip, rows.begin() + skip + len * vocab);
    at += len;
    bt += blen;
  }
  return logits;
}

// "=" when `got` is `want` byte for byte; else the largest |difference| and the first position
// whose row differs.
std::string difference(const std::vector<float>& want, const std::vector<float>& got, int64_t vocab,
                       bool* same) {
  if (testing_support::same_bits(want, got)) return "=";
  *same = false;
  if (want.size() != got.size()) return "size";
  double worst = 0;
  int64_t first = -1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::memcmp(&want[i], &got[i], sizeof(float)) == 0) continue;
    if (first < 0) first = static_cast<int64_t>(i) / vocab;
    worst = std::max(worst, std::fabs(static_cast<double>(want[i]) - got[i]));
  }
  char text[64];
  std::snprintf(text, sizeof(text), "%.2g@%lld", worst, static_cast<long long>(first));
  return text;
}

class BatchInvarianceOfPositions : public ::testing::TestWithParam<InvarianceCase> {};

TEST_P(BatchInvarianceOfPositions, EveryWayGivesTheDecodeBits) {
  const InvarianceCase& c = GetParam();
  if (c.activations != ActivationPrecision::kF32 && !cpu_features().avx512_bf16)
    GTEST_SKIP() << "no AVX512_BF16: " << activation_precision_name(c.activations)
                 << " computes as f32 here";
  const std::string dir = testing_support::tiny_checkpoint(c.arch, c.scheme, 3, kVocab);
  ModelOptions options;
  options.cpu.activations = c.activations;
  options.cpu.batch_invariant = true;
  options.moe_path = c.moe_path;
  options.threads = 2;
  auto model = Model::load(dir, options);
  options.threads = 1;
  auto model1 = Model::load(dir, options);
  const int64_t vocab = model->config().vocab_size;
  // Past M3's block cut (4 blocks of 16): positions 64..99 choose their MSA blocks.
  const size_t n = c.arch == Arch::kM3 ? 100 : 72;
  const auto prompt = testing_support::prompt_tokens(n, kVocab, 5);
  const auto other = testing_support::prompt_tokens(90, kVocab, 301);

  const std::vector<float> decode = run_chunked(*model, prompt, {1}, c.kv);
  struct Way {
    const char* name;
    std::vector<float> logits;
  };
  const int whole = static_cast<int>(n);
  std::vector<Way> ways;
  for (int k : {3, 4, 7, 8, 16, 64})
    ways.push_back({nullptr, run_chunked(*model, prompt, {k}, c.kv)});
  const char* chunk_names[] = {"k3", "k4", "k7", "k8", "k16", "k64"};
  for (int i = 0; i < 6; ++i) ways[i].name = chunk_names[i];
  ways.push_back({"whole", run_chunked(*model, prompt, {whole}, c.kv)});
  ways.push_back({"hit40", run_chunked(*model, prompt, {40, whole}, c.kv)});
  ways.push_back({"1+b13", run_beside(*model, prompt, {1}, other, {13}, c.kv)});
  ways.push_back({"7+b1", run_beside(*model, prompt, {7}, other, {1}, c.kv)});
  ways.push_back({"16+b16", run_beside(*model, prompt, {16}, other, {16}, c.kv)});
  ways.push_back({"t1:1", run_chunked(*model1, prompt, {1}, c.kv)});
  ways.push_back({"t1:k8", run_chunked(*model1, prompt, {8}, c.kv)});
  ways.push_back({"t1:whole", run_chunked(*model1, prompt, {whole}, c.kv)});

  bool same = true;
  std::string line = case_name(c) + ":";
  for (const Way& w : ways)
    line += std::string(" ") + w.name + "=" + difference(decode, w.logits, vocab, &same);
  std::printf("[invariance] %s\n", line.c_str());
  EXPECT_TRUE(same) << line;
}

// The precisions that switch with the call size cannot keep the promise: asking for both is an
// Error naming the precision, before any weight is read.
TEST(BatchInvariance, RefusesThePrecisionsThatSwitchWithTheCallSize) {
  const std::string dir =
      testing_support::tiny_checkpoint(Arch::kM2, QuantScheme::kNone, 3, kVocab);
  for (ActivationPrecision p :
       {ActivationPrecision::kBF16Batches, ActivationPrecision::kBF16x2Batches}) {
    ModelOptions options;
    options.cpu.activations = p;
    options.cpu.batch_invariant = true;
    testing_support::expect_error_mentions([&] { Model::load(dir, options); },
                                           activation_precision_name(p));
    options.cpu.batch_invariant = false;
    EXPECT_NO_THROW(Model::load(dir, options));
  }
}

INSTANTIATE_TEST_SUITE_P(TinyModels, BatchInvarianceOfPositions, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return case_name(info.param); });

}  // namespace
}  // namespace minimax
