// The rows of the op table. Shapes: odd sizes (tails of every vector width), the bundled tiny
// model's, and the released MiniMax-M2 / M3 widths (spec/configs/): M2 hidden 3072, 48 query and 8
// KV heads of 128, experts of 1536, 256 experts top-8; M3 hidden 6144, 64 query and 4 KV heads of
// 128, experts and shared expert of 3072, 128 experts top-4, MSA blocks of 128 with 4 index heads
// and the top 16 blocks; rotary 64 of 128 for both.
#include <algorithm>
#include <string>
#include <vector>

#include "op_case.h"

namespace minimax {

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kAdd:
      return "add";
    case Op::kCopy:
      return "copy";
    case Op::kGatherRows:
      return "gather_rows";
    case Op::kStoreKv:
      return "store_kv";
    case Op::kLinear:
      return "linear";
    case Op::kEmbedding:
      return "embedding";
    case Op::kRmsNorm:
      return "rms_norm";
    case Op::kSumSquares:
      return "sum_squares";
    case Op::kRmsNormFromSums:
      return "rms_norm_from_sums";
    case Op::kRope:
      return "rope";
    case Op::kAttention:
      return "attention";
    case Op::kSelectBlocks:
      return "select_blocks";
    case Op::kRoute:
      return "route";
    case Op::kGlu:
      return "glu";
    case Op::kQuantizeActivations:
      return "quantize_activations";
    case Op::kMoe:
      return "moe";
  }
  return "?";
}

namespace {

// Why each default: data movement, decoding, RoPE (whose f32 angle ops.h fixes), the router's
// weights and the FP8 emulation have one right answer, so every backend gives the reference's
// bits. Norms and activations differ from the reference's double arithmetic by a few f32
// roundings (NMSE ~1e-14). Products over hundreds to thousands of terms differ by the f32
// summation order (~1e-13 measured); with bf16 products (2^-9 relative per activation) they move
// by ~1e-5, and the limits leave a decade above what the backends here show, so that a wrong
// index (NMSE near 1) or a lost tail (~1/cols) still fails.
struct Defaults {
  double nmse, nmse_reduced;
};
Defaults default_tolerance(Op op) {
  switch (op) {
    case Op::kRmsNorm:
    case Op::kSumSquares:
    case Op::kRmsNormFromSums:
    case Op::kGlu:
      return {1e-12, 1e-12};
    case Op::kLinear:
    case Op::kAttention:
    case Op::kMoe:
      return {1e-10, 1e-4};
    default:
      return {0, 0};
  }
}

constexpr WeightFormat kF32 = WeightFormat::kF32, kBf16 = WeightFormat::kBF16,
                       kFp8Channel = WeightFormat::kFp8Channel, kFp8Block = WeightFormat::kFp8Block,
                       kMxfp4 = WeightFormat::kMxfp4, kNvfp4 = WeightFormat::kNvfp4,
                       kMxfp8 = WeightFormat::kMxfp8;
constexpr WeightFormat kAllFormats[] = {kF32,   kBf16,  kFp8Channel, kFp8Block,
                                        kMxfp4, kNvfp4, kMxfp8};
constexpr KvDtype kKvF32 = KvDtype::kF32, kKvBf16 = KvDtype::kBF16, kKvFp8 = KvDtype::kFp8E4m3;
constexpr CaseSize kReal = CaseSize::kReal, kFull = CaseSize::kFull;

// An odd linear shape per format: FP8 tiles partly outside the matrix; the packed formats need
// whole blocks of 32 (16 for NVFP4) columns.
OpCase odd_linear(WeightFormat f, int64_t T) {
  const bool blocked = f == kMxfp4 || f == kNvfp4 || f == kMxfp8;
  if (f == kFp8Block)
    return {.op = Op::kLinear, .shape = "odd", .T = T, .rows = 300, .cols = 389, .weights = f};
  return {.op = Op::kLinear,
          .shape = "odd",
          .T = T,
          .rows = 37,
          .cols = blocked ? 96 : 29,
          .weights = f};
}

// Small MoE: 8 experts, top 4, widths with partial FP8 tiles (the packed formats: whole blocks).
OpCase small_moe(WeightFormat f, int64_t T) {
  const bool blocked = f == kMxfp4 || f == kNvfp4 || f == kMxfp8;
  return {.op = Op::kMoe,
          .shape = "small",
          .T = T,
          .rows = blocked ? 320 : 203,
          .cols = blocked ? 512 : 389,
          .weights = f,
          .experts = 8,
          .top_k = 4};
}

std::vector<OpCase> build_table() {
  // One row per line.
  // clang-format off
  std::vector<OpCase> t = {
      // ---- Element-wise and data movement
      {.op = Op::kAdd, .shape = "odd", .rows = 1, .cols = 1037},
      {.op = Op::kAdd, .shape = "threads", .rows = 1, .cols = 300001},  // chunks and a ragged end
      {.op = Op::kAdd, .shape = "m3.hidden", .size = kReal, .rows = 9, .cols = 6144},
      {.op = Op::kCopy, .shape = "odd", .rows = 1, .cols = 1037},
      {.op = Op::kGatherRows, .shape = "odd", .T = 5, .rows = 37, .cols = 13},
      {.op = Op::kGatherRows, .shape = "m3.hidden", .size = kReal, .T = 9, .rows = 512, .cols = 6144},
      {.op = Op::kStoreKv, .shape = "tiny", .T = 5, .kv_heads = 2, .head_dim = 16, .context = 37},
      {.op = Op::kStoreKv, .shape = "tiny", .T = 5, .kv_heads = 2, .head_dim = 16, .context = 37, .kv = kKvBf16, .page_size = 16},
      {.op = Op::kStoreKv, .shape = "tiny", .T = 5, .kv_heads = 2, .head_dim = 16, .context = 37, .kv = kKvFp8, .page_size = 16},
      {.op = Op::kStoreKv, .shape = "m3", .size = kReal, .T = 9, .kv_heads = 4, .head_dim = 128, .context = 300, .kv = kKvFp8, .page_size = 64},
      // ---- Norms, RoPE, activations
      {.op = Op::kRmsNorm, .shape = "one", .rows = 1, .cols = 1},
      {.op = Op::kRmsNorm, .shape = "odd", .rows = 3, .cols = 7},
      {.op = Op::kRmsNorm, .shape = "odd", .rows = 300, .cols = 517, .add_one = true},
      {.op = Op::kRmsNorm, .shape = "many_rows", .rows = 1024, .cols = 64},
      {.op = Op::kRmsNorm, .shape = "tiny.qk", .rows = 5, .cols = 128},
      {.op = Op::kRmsNorm, .shape = "m2.q_norm", .size = kReal, .rows = 9, .cols = 6144},
      {.op = Op::kRmsNorm, .shape = "m3.head_norm", .size = kReal, .rows = 9 * 64, .cols = 128, .add_one = true},
      {.op = Op::kRmsNorm, .shape = "m2.hidden", .size = kReal, .rows = 9, .cols = 3072},
      {.op = Op::kSumSquares, .shape = "odd", .rows = 3, .cols = 517},
      {.op = Op::kSumSquares, .shape = "m2.q_norm_tp2", .size = kReal, .rows = 9, .cols = 3072},
      {.op = Op::kRmsNormFromSums, .shape = "odd", .rows = 3, .cols = 517},
      {.op = Op::kRmsNormFromSums, .shape = "m2.q_norm_tp2", .size = kReal, .rows = 9, .cols = 3072, .add_one = true},
      {.op = Op::kRope, .shape = "tiny", .T = 5, .heads = 8, .head_dim = 16, .rotary_dim = 8, .context = 37},
      {.op = Op::kRope, .shape = "odd", .T = 3, .heads = 3, .head_dim = 20, .rotary_dim = 14, .context = 1000},
      {.op = Op::kRope, .shape = "tiny.index_k", .T = 70, .heads = 1, .head_dim = 16, .rotary_dim = 8},
      {.op = Op::kRope, .shape = "full_rotation", .T = 4, .heads = 2, .head_dim = 128, .rotary_dim = 128, .context = 5},
      {.op = Op::kRope, .shape = "m3.k_many", .size = kReal, .T = 300, .heads = 4, .head_dim = 128, .rotary_dim = 64, .context = 20},
      {.op = Op::kRope, .shape = "m2.q", .size = kReal, .T = 9, .heads = 48, .head_dim = 128, .rotary_dim = 64, .context = 1000},
      {.op = Op::kRope, .shape = "m3.k_far", .size = kReal, .T = 9, .heads = 4, .head_dim = 128, .rotary_dim = 64, .context = 180000},
      {.op = Op::kGlu, .shape = "odd", .rows = 1, .cols = 1037, .glu = GluKind::kSilu},
      {.op = Op::kGlu, .shape = "odd", .rows = 1, .cols = 1037, .glu = GluKind::kSwigluOai},
      {.op = Op::kGlu, .shape = "one", .rows = 1, .cols = 1, .glu = GluKind::kSwigluOai},
      {.op = Op::kGlu, .shape = "odd", .rows = 1, .cols = 7, .glu = GluKind::kSilu},
      {.op = Op::kGlu, .shape = "odd", .rows = 1, .cols = 3071, .glu = GluKind::kSwigluOai},
      {.op = Op::kGlu, .shape = "m2.expert", .size = kReal, .rows = 9, .cols = 1536},
      {.op = Op::kQuantizeActivations, .shape = "odd", .rows = 5, .cols = 300, .quant = ActQuantKind::kFp8PerToken},
      {.op = Op::kQuantizeActivations, .shape = "odd", .rows = 3, .cols = 384, .quant = ActQuantKind::kFp8Group},
      {.op = Op::kQuantizeActivations, .shape = "odd", .rows = 4, .cols = 100, .quant = ActQuantKind::kFp8FixedScale},
      // ---- Linear and embedding at the released widths (odd shapes per format are added below)
      {.op = Op::kLinear, .shape = "m2.q_proj", .size = kReal, .T = 1, .rows = 6144, .cols = 3072, .weights = kFp8Block},
      {.op = Op::kLinear, .shape = "m2.q_proj", .size = kReal, .T = 9, .rows = 6144, .cols = 3072, .weights = kFp8Block},
      {.op = Op::kLinear, .shape = "m2.k_proj", .size = kReal, .T = 1, .rows = 1024, .cols = 3072, .weights = kBf16},
      {.op = Op::kLinear, .shape = "m2.o_proj", .size = kReal, .T = 4, .rows = 3072, .cols = 6144, .weights = kBf16},
      {.op = Op::kLinear, .shape = "m2.router", .size = kReal, .T = 9, .rows = 256, .cols = 3072, .weights = kF32},
      {.op = Op::kLinear, .shape = "m3.shared_up", .size = kReal, .T = 1, .rows = 3072, .cols = 6144, .weights = kFp8Channel},
      {.op = Op::kLinear, .shape = "m3.shared_down", .size = kReal, .T = 9, .rows = 6144, .cols = 3072, .weights = kMxfp8},
      {.op = Op::kLinear, .shape = "m3.expert_up", .size = kReal, .T = 1, .rows = 3072, .cols = 6144, .weights = kMxfp4},
      {.op = Op::kLinear, .shape = "m3.expert_down", .size = kReal, .T = 9, .rows = 6144, .cols = 3072, .weights = kNvfp4},
      {.op = Op::kLinear, .shape = "m2.lm_head", .size = kFull, .T = 1, .rows = 200064, .cols = 3072, .weights = kBf16},
      {.op = Op::kLinear, .shape = "m3.q_proj", .size = kFull, .T = 16, .rows = 8192, .cols = 6144, .weights = kFp8Block},
      {.op = Op::kEmbedding, .shape = "m3.embed_rows", .size = kReal, .T = 9, .rows = 4096, .cols = 6144, .weights = kBf16},
      {.op = Op::kEmbedding, .shape = "m2.embed", .size = kFull, .T = 9, .rows = 200064, .cols = 3072, .weights = kBf16},
      // ---- Attention: T queries at positions context.. over context + T slots
      {.op = Op::kAttention, .shape = "tiny.first", .T = 1, .heads = 8, .kv_heads = 2, .head_dim = 16},
      {.op = Op::kAttention, .shape = "tiny.decode", .T = 1, .heads = 8, .kv_heads = 2, .head_dim = 16, .context = 37},
      {.op = Op::kAttention, .shape = "tiny.prefill", .T = 20, .heads = 8, .kv_heads = 2, .head_dim = 16},
      {.op = Op::kAttention, .shape = "tiny.decode", .T = 1, .heads = 8, .kv_heads = 2, .head_dim = 16, .context = 37, .kv = kKvBf16, .page_size = 16},
      {.op = Op::kAttention, .shape = "tiny.prefill", .T = 20, .heads = 8, .kv_heads = 2, .head_dim = 16, .context = 10, .kv = kKvFp8, .page_size = 16},
      {.op = Op::kAttention, .shape = "tiny.msa", .T = 40, .heads = 8, .kv_heads = 2, .head_dim = 16, .context = 50, .block_size = 16, .topk_blocks = 4},
      {.op = Op::kAttention, .shape = "odd", .T = 5, .heads = 6, .kv_heads = 3, .head_dim = 13, .context = 36},
      {.op = Op::kAttention, .shape = "odd", .T = 7, .heads = 4, .kv_heads = 1, .head_dim = 40, .context = 90, .kv = kKvBf16},
      {.op = Op::kAttention, .shape = "m2.decode", .size = kReal, .T = 1, .heads = 48, .kv_heads = 8, .head_dim = 128, .context = 700, .kv = kKvBf16},
      {.op = Op::kAttention, .shape = "m2.prefill", .size = kReal, .T = 64, .heads = 48, .kv_heads = 8, .head_dim = 128, .kv = kKvBf16},
      {.op = Op::kAttention, .shape = "m3.decode_msa", .size = kReal, .T = 1, .heads = 64, .kv_heads = 4, .head_dim = 128, .context = 2900, .kv = kKvFp8, .page_size = 64, .block_size = 128, .topk_blocks = 16},
      {.op = Op::kAttention, .shape = "m3.prefill_chunk", .size = kReal, .T = 12, .heads = 64, .kv_heads = 4, .head_dim = 128, .context = 120},
      {.op = Op::kAttention, .shape = "m3.decode_msa_32k", .size = kFull, .T = 2, .heads = 64, .kv_heads = 4, .head_dim = 128, .context = 32768, .kv = kKvBf16, .page_size = 64, .block_size = 128, .topk_blocks = 16},
      {.op = Op::kAttention, .shape = "m2.prefill_512", .size = kFull, .T = 512, .heads = 48, .kv_heads = 8, .head_dim = 128, .context = 512, .kv = kKvFp8},
      // ---- MSA block choice (index heads = kv_heads, index_dim = head_dim)
      {.op = Op::kSelectBlocks, .shape = "tiny.all_visible", .T = 3, .kv_heads = 2, .head_dim = 16, .context = 20, .block_size = 16, .topk_blocks = 4},
      {.op = Op::kSelectBlocks, .shape = "tiny", .T = 3, .kv_heads = 2, .head_dim = 16, .context = 100, .block_size = 16, .topk_blocks = 4},
      {.op = Op::kSelectBlocks, .shape = "tiny", .T = 3, .kv_heads = 2, .head_dim = 16, .context = 100, .kv = kKvBf16, .page_size = 16, .block_size = 16, .topk_blocks = 4},
      {.op = Op::kSelectBlocks, .shape = "odd", .T = 6, .kv_heads = 3, .head_dim = 13, .context = 194, .block_size = 7, .topk_blocks = 5, .init_blocks = 1, .local_blocks = 2},
      {.op = Op::kSelectBlocks, .shape = "five_heads", .T = 25, .kv_heads = 5, .head_dim = 20, .context = 60, .block_size = 4, .topk_blocks = 6, .init_blocks = 2},
      {.op = Op::kSelectBlocks, .shape = "no_forced", .T = 1, .kv_heads = 1, .head_dim = 9, .context = 90, .block_size = 3, .topk_blocks = 4, .local_blocks = 0},
      {.op = Op::kSelectBlocks, .shape = "m3", .size = kReal, .T = 4, .kv_heads = 4, .head_dim = 128, .context = 4000, .kv = kKvFp8, .page_size = 64, .block_size = 128, .topk_blocks = 16},
      {.op = Op::kSelectBlocks, .shape = "m3_128k", .size = kFull, .T = 2, .kv_heads = 4, .head_dim = 128, .context = 131000, .kv = kKvBf16, .block_size = 128, .topk_blocks = 16},
      // ---- Router and MoE
      {.op = Op::kRoute, .shape = "tiny", .T = 5, .experts = 8, .top_k = 2},
      {.op = Op::kRoute, .shape = "m2", .size = kReal, .T = 9, .experts = 256, .top_k = 8},
      {.op = Op::kRoute, .shape = "m3", .size = kReal, .T = 9, .experts = 128, .top_k = 4},
      {.op = Op::kMoe, .shape = "small_swiglu_oai", .T = 5, .rows = 320, .cols = 512, .weights = kMxfp4, .experts = 8, .top_k = 4, .glu = GluKind::kSwigluOai},
      {.op = Op::kMoe, .shape = "small_bf16_path", .T = 5, .rows = 203, .cols = 389, .weights = kFp8Block, .experts = 8, .top_k = 4, .bf16_moe = true, .nmse = 1e-6},
      {.op = Op::kMoe, .shape = "small_fp8_down", .T = 5, .rows = 320, .cols = 512, .weights = kMxfp4, .experts = 8, .top_k = 4, .glu = GluKind::kSwigluOai, .quant = ActQuantKind::kFp8FixedScale, .nmse = 1e-4, .nmse_reduced = 1e-3},
      {.op = Op::kMoe, .shape = "small_batch", .T = 40, .rows = 203, .cols = 389, .weights = kBf16, .experts = 8, .top_k = 4},
      {.op = Op::kMoe, .shape = "m3.experts_fp8_swiglu", .size = kReal, .T = 1, .rows = 3072, .cols = 6144, .weights = kFp8Channel, .experts = 4, .top_k = 4, .glu = GluKind::kSwigluOai},
      {.op = Op::kMoe, .shape = "m2.experts", .size = kReal, .T = 1, .rows = 1536, .cols = 3072, .weights = kFp8Block, .experts = 8, .top_k = 8},
      {.op = Op::kMoe, .shape = "m2.experts", .size = kReal, .T = 9, .rows = 1536, .cols = 3072, .weights = kFp8Block, .experts = 8, .top_k = 4},
      {.op = Op::kMoe, .shape = "m3.experts", .size = kReal, .T = 3, .rows = 3072, .cols = 6144, .weights = kMxfp4, .experts = 3, .top_k = 2},
      {.op = Op::kMoe, .shape = "m2.all_experts", .size = kFull, .T = 16, .rows = 1536, .cols = 3072, .weights = kFp8Block, .experts = 256, .top_k = 8},
  };
  // clang-format on
  // Every format at odd shapes: decode, a small batch, and a batch large enough for batch GEMMs.
  for (WeightFormat f : kAllFormats)
    for (int64_t T : {1, 5, 9}) t.push_back(odd_linear(f, T));
  // The bundled tiny model's MoE (hidden 64, 16 experts of 32, top 4): M2's silu, M3's SwiGLU-OAI.
  for (WeightFormat f : {kBf16, kFp8Block, kMxfp4})
    for (GluKind glu : {GluKind::kSilu, GluKind::kSwigluOai})
      for (int64_t T : {1, 9, 70})
        t.push_back({.op = Op::kMoe,
                     .shape = glu == GluKind::kSilu ? "tiny_m2" : "tiny_m3",
                     .T = T,
                     .rows = 32,
                     .cols = 64,
                     .weights = f,
                     .experts = 16,
                     .top_k = 4,
                     .glu = glu});
  for (WeightFormat f : kAllFormats) {
    t.push_back(small_moe(f, 1));
    t.push_back(small_moe(f, 5));
    t.push_back(
        {.op = Op::kEmbedding, .shape = "odd", .T = 6, .rows = 50, .cols = 96, .weights = f});
  }
  return t;
}

std::string format_tag(WeightFormat f) {
  std::string s(weight_format_name(f));
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
}

std::string quant_tag(ActQuantKind q) {
  switch (q) {
    case ActQuantKind::kFp8PerToken:
      return "fp8_per_token";
    case ActQuantKind::kFp8Group:
      return "fp8_group";
    case ActQuantKind::kFp8FixedScale:
      return "fp8_fixed_scale";
    case ActQuantKind::kNone:
      break;
  }
  return "none";
}

}  // namespace

double tolerance(const OpCase& c, bool reduced_activations) {
  const Defaults d = default_tolerance(c.op);
  if (reduced_activations)
    return c.nmse_reduced >= 0 ? c.nmse_reduced : std::max(d.nmse_reduced, c.nmse);
  return c.nmse >= 0 ? c.nmse : d.nmse;
}

std::span<const OpCase> op_table() {
  static const std::vector<OpCase> table = build_table();
  return table;
}

std::string case_name(const OpCase& c) {
  std::string name = std::string(op_name(c.op)) + "_" + c.shape;
  const bool reads_weights = c.op == Op::kLinear || c.op == Op::kEmbedding || c.op == Op::kMoe;
  if (reads_weights) name += "_" + format_tag(c.weights);
  if (c.op == Op::kAttention || c.op == Op::kStoreKv || c.op == Op::kSelectBlocks)
    name += "_kv_" + std::string(kv_dtype_name(c.kv)) + (c.page_size > 0 ? "_paged" : "");
  if (c.op == Op::kGlu) name += "_" + std::to_string(c.rows * c.cols);
  if (c.op == Op::kGlu || c.op == Op::kMoe)
    name += c.glu == GluKind::kSilu ? "_silu" : "_swiglu_oai";
  if (c.op == Op::kRmsNorm || c.op == Op::kSumSquares || c.op == Op::kRmsNormFromSums)
    name +=
        "_" + std::to_string(c.rows) + "x" + std::to_string(c.cols) + (c.add_one ? "_gemma" : "");
  if (c.quant != ActQuantKind::kNone) name += "_" + quant_tag(c.quant);
  if (c.T > 1 || c.op == Op::kLinear || c.op == Op::kMoe) name += "_T" + std::to_string(c.T);
  for (char& ch : name)
    if (ch == '.' || ch == '-') ch = '_';
  return name;
}

}  // namespace minimax
