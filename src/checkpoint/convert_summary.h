// Counters `minimax convert` reports at the end: tensors converted / copied, elements verified,
// the histogram of per-channel scale exponents and of the exponent span of the rows, bytes, time.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "checkpoint/mxfp4_to_fp8_exact.h"

namespace minimax {

// Per-row counters, kept per thread and merged once a shard is complete.
struct RowStats {
  static constexpr int kScaleOffset = 128;  // scale exponent S in [-126, 127] -> index S + 128
  static constexpr int kMaxSpan = 15;       // spans above are counted in the last bucket

  uint64_t fp8_rows = 0, zero_rows = 0, bf16_rows = 0;
  uint64_t elements_verified = 0;
  std::array<uint64_t, 256> scale_exponents{};  // FP8 rows by S (all-zero rows included, S = 0)
  std::array<uint64_t, kMaxSpan + 1> spans{};   // nonzero FP8 rows by E_hi - E_lo

  // span: E_hi - E_lo of the row's nonzero elements, -1 for an all-zero row.
  void add_fp8_row(int scale_exponent, int span, int64_t cols);
  void add_bf16_row(int64_t cols);
  void merge(const RowStats& other);
};

struct ConvertSummary {
  Fp8Target target = Fp8Target::kOcp;
  size_t fp8_weights = 0, bf16_weights = 0, copied = 0, dropped_scales = 0;
  size_t fp8_copied = 0;  // source FP8 Linears (Quark FP8 attention) among `copied`
  size_t shards_written = 0, shards_kept = 0, shards_redone = 0;
  size_t files_removed = 0;  // entries of DST.partial no manifest recorded (each named on stderr)
  RowStats rows;
  uint64_t source_bytes = 0;  // tensor data read from the source
  uint64_t output_bytes = 0;  // bytes of the output shard files
  double seconds = 0;
};

// The closing report, several lines.
std::string format_convert_summary(const ConvertSummary& summary);

}  // namespace minimax
