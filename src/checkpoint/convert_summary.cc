// RowStats bookkeeping and the text of the convert summary.
#include "checkpoint/convert_summary.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/progress.h"

namespace minimax {

void RowStats::add_fp8_row(int scale_exponent, int span, int64_t cols) {
  ++fp8_rows;
  elements_verified += static_cast<uint64_t>(cols);
  ++scale_exponents[std::clamp(scale_exponent + kScaleOffset, 0, 255)];
  if (span < 0) {
    ++zero_rows;
    return;
  }
  ++spans[std::min(span, kMaxSpan)];
}

void RowStats::add_bf16_row(int64_t cols) {
  ++bf16_rows;
  elements_verified += static_cast<uint64_t>(cols);
}

void RowStats::merge(const RowStats& other) {
  fp8_rows += other.fp8_rows;
  zero_rows += other.zero_rows;
  bf16_rows += other.bf16_rows;
  elements_verified += other.elements_verified;
  for (size_t i = 0; i < scale_exponents.size(); ++i)
    scale_exponents[i] += other.scale_exponents[i];
  for (size_t i = 0; i < spans.size(); ++i) spans[i] += other.spans[i];
}

namespace {

// "  S=-9     1234  ########" lines, bars scaled to the largest bucket.
void append_bar(std::string& out, const std::string& label, uint64_t count, uint64_t largest) {
  const int width = largest > 0 ? static_cast<int>((40 * count + largest - 1) / largest) : 0;
  out += fmt::format("    {:>8} {:>12}  {}\n", label, count, std::string(width, '#'));
}

}  // namespace

std::string format_convert_summary(const ConvertSummary& s) {
  std::string out;
  out += fmt::format("convert summary (target {})\n", fp8_target_name(s.target));
  out += fmt::format(
      "  tensors     {} routed expert weights -> FP8 e4m3 + F32 row scale, {} MXFP4 "
      "weights -> BF16, {} copied byte for byte, {} MXFP4 scale tensors dropped\n",
      s.fp8_weights, s.bf16_weights, s.copied, s.dropped_scales);
  if (s.fp8_copied > 0)
    out += fmt::format(
        "  fp8 layers  {} source FP8 Linears (Quark layer_quant_config) copied as they are, "
        "scales declared [out, 1]\n",
        s.fp8_copied);
  out += fmt::format(
      "  shards      {} written, {} kept from the interrupted run (re-verified), {} "
      "redone\n",
      s.shards_written, s.shards_kept, s.shards_redone);
  if (s.files_removed > 0)
    out += fmt::format(
        "  removed     {} files of the interrupted run's output that its resume manifest does not "
        "record (named on stderr)\n",
        s.files_removed);
  out += fmt::format(
      "  verified    {} elements equal to their MXFP4 source in float64 ({} FP8 rows, "
      "{} of them all zero; {} BF16 rows)\n",
      s.rows.elements_verified, s.rows.fp8_rows, s.rows.zero_rows, s.rows.bf16_rows);
  uint64_t largest = 0;
  int first = -1, last = -1;
  for (int i = 0; i < 256; ++i) {
    if (s.rows.scale_exponents[i] == 0) continue;
    largest = std::max(largest, s.rows.scale_exponents[i]);
    if (first < 0) first = i;
    last = i;
  }
  if (first >= 0) {
    out += "  per-channel scale exponent S (weight_scale = 2^S), rows:\n";
    for (int i = first; i <= last; ++i)
      append_bar(out, fmt::format("S={}", i - RowStats::kScaleOffset), s.rows.scale_exponents[i],
                 largest);
    const Fp8Window window = fp8_window(s.target);
    out += fmt::format("  exponent span E_hi - E_lo of the nonzero rows (limit {}), rows:\n",
                       window.max_exponent - window.min_exponent);
    uint64_t span_largest = *std::max_element(s.rows.spans.begin(), s.rows.spans.end());
    for (int i = 0; i <= RowStats::kMaxSpan; ++i)
      if (s.rows.spans[i] != 0)
        append_bar(out, fmt::format("{}", i), s.rows.spans[i], span_largest);
  }
  const double rate = s.seconds > 0 ? s.source_bytes / s.seconds : 0;
  out += fmt::format("  bytes       {} read, {} written\n", format_bytes(s.source_bytes),
                     format_bytes(s.output_bytes));
  out += fmt::format("  time        {:.2f} s ({}/s of source)\n", s.seconds, format_bytes(rate));
  return out;
}

}  // namespace minimax
