// The op table: every op of kernels/ops.h with the shapes, types and tolerance a backend must meet
// against kernels/reference/ (in the manner of llama.cpp's test-backend-ops). One row per case;
// op_table.cc holds the rows, op_tests_*.cc make each op's inputs and run it on a backend, and
// backend_ops_test.cc runs every row on every backend configuration this machine has. A new
// backend passes by running that one binary (`test_backend_ops --backend NAME`).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kernels/ops.h"

namespace minimax {

enum class Op : uint8_t {
  kAdd,
  kCopy,
  kGatherRows,
  kStoreKv,
  kLinear,
  kEmbedding,
  kRmsNorm,
  kSumSquares,
  kRmsNormFromSums,
  kRope,
  kAttention,
  kSelectBlocks,
  kRoute,
  kGlu,
  kQuantizeActivations,
  kMoe,
};
std::string_view op_name(Op op);  // the KernelOps entry's name: "rms_norm", "select_blocks", ...

// Which run of the table a case belongs to.
enum class CaseSize : uint8_t {
  kTiny,  // odd and tiny-model sizes: every run, sanitizers included
  kReal,  // the released M2 / M3 widths of one matrix or layer, at most 8 experts: every run but
          // the sanitizer pass
  kFull,  // whole tensors (the 200K-row vocabulary, 256 experts, long contexts): label "slow"
};

// Each op reads the fields its comment names; the rest stay at their defaults.
struct OpCase {
  Op op;
  const char* shape;  // what the sizes are: "odd", "tiny", "m2.q_proj", "m3.decode", ...
  CaseSize size = CaseSize::kTiny;
  int64_t T = 1;  // tokens: rows of the activations (attention: new queries)
  // Linear, embedding: the weight [rows, cols]. MoE: inter = rows, hidden = cols. Norms and
  // element-wise ops: `rows` rows of `cols` values.
  int64_t rows = 0, cols = 0;
  WeightFormat weights = WeightFormat::kF32;
  // Attention, rope, store_kv (width = kv_heads·head_dim), select_blocks (index heads = kv_heads,
  // index_dim = head_dim).
  int heads = 0, kv_heads = 0, head_dim = 0, rotary_dim = 0;
  int context = 0;  // cache slots written before this step's T
  KvDtype kv = KvDtype::kF32;
  int page_size = 0;                      // > 0: a paged cache whose pages are shuffled
  int block_size = 0, topk_blocks = 0;    // MSA block choice; attention: a random choice of blocks
  int init_blocks = 0, local_blocks = 1;  // select_blocks: the blocks always chosen (M3: 0 and 1)
  int experts = 0, top_k = 0;             // route, moe
  GluKind glu = GluKind::kSilu;           // glu, moe
  bool add_one = false;                   // norms: Gemma-style (1 + w)
  ActQuantKind quant = ActQuantKind::kNone;  // quantize_activations; moe: the down input
  bool bf16_moe = false;                     // moe: the dequant path's bf16 activations
  // Tolerances on the normalised squared error Σ(got − ref)² / Σ ref² of the float outputs, with
  // f32 activations and with reduced-precision ones (bf16 products); 0 means bit-identical.
  // Integer outputs (expert and block ids) are always compared exactly. Negative: the op's
  // default (default_tolerance in op_table.cc).
  double nmse = -1, nmse_reduced = -1;
};

// The tolerance a backend must meet for `c`: with reduced-precision activations or not.
double tolerance(const OpCase& c, bool reduced_activations);

// Every row.
std::span<const OpCase> op_table();

// "linear_m2_q_proj_fp8_block_T4": unique per row, a valid test name.
std::string case_name(const OpCase& c);

}  // namespace minimax
