// CPU grouped MoE: plan (tokens per expert), then waves of experts; in each wave one pool call runs
// every active expert's gate and up projections and the activation, each thread on its own slice
// of the output rows of every expert, and a second pool call runs the down projections the same
// way and adds the results into y. Each thread calls cpu_linear on row slices of the weights
// without the pool (the pool is busy running it), so every weight byte is read once per call by
// exactly one thread, and a decode step costs two pool wake-ups per layer, not three per expert.
#include <algorithm>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/linear.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

// Tokens of one expert that share a call. The batch GEMMs take a call's tokens in one pass over the
// weights (on AMX an expert's gate at 70 tokens costs 0.75 of two calls of 35: the panel decode is
// shared), and the row kernels cut a call into blocks that fit L2 themselves; a 512-token prompt
// gives the bench shape's 64 experts 64 tokens each on average, so 64 split half of them in two.
constexpr int64_t kItemTokens = 128;
// Assignments whose expert inputs and activations one wave holds at once.
constexpr int64_t kWaveTokens = 256;
// A pool call uses at most one thread per this many weight bytes of the phase.
constexpr int64_t kMinBytesPerThread = 128 * 1024;
// Thread slices start on multiples of 16 rows: whole cache lines of output, and the same row tiles
// in cpu_linear whatever the thread count (so results do not depend on it).
constexpr int64_t kRowAlign = 16;

// One expert over a run of its tokens: assignments [first, first + count) of the plan, whose
// inputs and activations are rows [row, row + count) of the wave buffers.
struct Item {
  int expert = 0;
  int64_t first = 0, count = 0, row = 0;
};

// Rows [begin, end) of `w` as a view of the same bytes. For FP8 tiles `begin` is a multiple of
// the tile height (row_alignment makes sure).
WeightView row_slice(const WeightView& w, int64_t begin, int64_t end) {
  return slice_rows(w, begin, end - begin, "moe expert");
}

int64_t row_alignment(const WeightView& w) {
  if (w.format == WeightFormat::kFp8Block && w.block_rows > 0)
    return std::lcm<int64_t>(kRowAlign, w.block_rows);
  return kRowAlign;
}

// Start of part p of `parts` over `rows`, on a multiple of `align`.
int64_t part_start(int64_t rows, int64_t p, int64_t parts, int64_t align) {
  return p >= parts ? rows : std::min(rows, rows * p / parts / align * align);
}

// How many threads a phase reading `bytes` of weights with `rows` output rows per expert uses.
int64_t phase_parts(ThreadPool* pool, int64_t bytes, int64_t rows, int64_t align) {
  const int64_t threads = pool == nullptr ? 1 : static_cast<int64_t>(pool->size());
  return std::clamp<int64_t>(bytes / kMinBytesPerThread, 1,
                             std::min(threads, (rows + align - 1) / align));
}

void round_to_bf16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = bf16_to_f32(f32_to_bf16(x[i]));
}

// What both phases of one wave read.
struct Wave {
  const MoeArgs* args = nullptr;
  const MoePlan* plan = nullptr;
  const CpuLinearOptions* linear = nullptr;  // the backend's ISA level and activation precision
  const Item* items = nullptr;
  int num_items = 0;
  const float* xs = nullptr;  // [wave rows, hidden] expert inputs, or the one token when T == 1
  bool single_token = false;  // every item reads xs row 0
  float* act = nullptr;       // [wave rows, inter] activations
  int64_t parts = 1, align = kRowAlign;
};

// Part p of phase 1: rows [r0, r1) of every item's gate and up, then the activation.
void gate_up_part(const Wave& wave, int64_t p) {
  thread_local std::vector<float> gate_buf, up_buf;
  const MoeArgs& a = *wave.args;
  const int64_t H = a.hidden, I = a.inter;
  const int64_t r0 = part_start(I, p, wave.parts, wave.align);
  const int64_t r1 = part_start(I, p + 1, wave.parts, wave.align);
  if (r0 >= r1) return;
  const int64_t rows = r1 - r0;
  for (int i = 0; i < wave.num_items; ++i) {
    const Item& item = wave.items[i];
    const ExpertWeights& w = a.experts[item.expert];
    const int64_t n = item.count;
    const float* x = wave.xs + (wave.single_token ? 0 : item.row * H);
    float* act = wave.act + item.row * I;
    // One token or all rows: the slice's output lands in place; otherwise via a buffer.
    const bool direct = n == 1 || rows == I;
    if (up_buf.size() < static_cast<size_t>(n * rows)) up_buf.resize(n * rows);
    if (!direct && gate_buf.size() < static_cast<size_t>(n * rows)) gate_buf.resize(n * rows);
    float* gate = direct ? act + r0 : gate_buf.data();
    float* up = up_buf.data();
    cpu_linear_op(row_slice(w.gate, r0, r1), x, n, gate, nullptr, *wave.linear);
    cpu_linear_op(row_slice(w.up, r0, r1), x, n, up, nullptr, *wave.linear);
    if (a.bf16_activations) {
      round_to_bf16(gate, n * rows);
      round_to_bf16(up, n * rows);
    }
    cpu_glu_at(gate, up, n * rows, a.act, gate, wave.linear->isa);
    if (a.bf16_activations) round_to_bf16(gate, n * rows);
    if (!direct)
      for (int64_t k = 0; k < n; ++k) std::copy_n(gate + k * rows, rows, act + k * I + r0);
  }
}

// Part p of phase 2: rows [c0, c1) of every item's down projection, added into y[:, c0:c1) with
// the routing weights (one thread per column slice, experts in ascending order).
void down_part(const Wave& wave, int64_t p) {
  thread_local std::vector<float> down_buf;
  const MoeArgs& a = *wave.args;
  const int64_t H = a.hidden, I = a.inter;
  const int64_t c0 = part_start(H, p, wave.parts, wave.align);
  const int64_t c1 = part_start(H, p + 1, wave.parts, wave.align);
  if (c0 >= c1) return;
  const int64_t cols = c1 - c0;
  for (int i = 0; i < wave.num_items; ++i) {
    const Item& item = wave.items[i];
    const int64_t n = item.count;
    if (down_buf.size() < static_cast<size_t>(n * cols)) down_buf.resize(n * cols);
    float* down = down_buf.data();
    cpu_linear_op(row_slice(a.experts[item.expert].down, c0, c1), wave.act + item.row * I, n, down,
                  nullptr, *wave.linear);
    if (a.bf16_activations) round_to_bf16(down, n * cols);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t at = item.first + k;
      const float weight = wave.plan->weights[at];
      float* y = a.y + int64_t(wave.plan->tokens[at]) * H + c0;
      const float* d = down + k * cols;
      for (int64_t c = 0; c < cols; ++c) y[c] += weight * d[c];
    }
  }
}

// Runs part(wave, p) for p < parts on the pool (inline for one part).
void run_parts(ThreadPool* pool, const Wave& wave, void (*part)(const Wave&, int64_t)) {
  if (wave.parts <= 1) {
    part(wave, 0);
    return;
  }
  struct Context {
    const Wave* wave;
    void (*part)(const Wave&, int64_t);
  } ctx{&wave, part};
  const Context* c = &ctx;
  pool->parallel_for(static_cast<size_t>(wave.parts), [c](size_t begin, size_t end, size_t) {
    for (size_t p = begin; p < end; ++p) c->part(*c->wave, static_cast<int64_t>(p));
  });
}

void check_expert(const MoeArgs& a, int e) {
  const ExpertWeights& w = a.experts[e];
  const int64_t H = a.hidden, I = a.inter;
  if (w.gate.rows != I || w.gate.cols != H || w.up.rows != I || w.up.cols != H ||
      w.down.rows != H || w.down.cols != I)
    fail(
        "moe: expert {} weights are gate [{}, {}], up [{}, {}], down [{}, {}]; expected "
        "[{}, {}], [{}, {}], [{}, {}]",
        e, w.gate.rows, w.gate.cols, w.up.rows, w.up.cols, w.down.rows, w.down.cols, I, H, I, H, H,
        I);
}

struct MoeScratch {
  MoePlan plan;
  std::vector<Item> items;
  std::vector<float> xs, act;
};

}  // namespace

void cpu_moe(const MoeArgs& a, ThreadPool* pool, const CpuLinearOptions& linear) {
  thread_local MoeScratch s;
  const int64_t H = a.hidden, I = a.inter, T = a.T;
  plan_moe_into(a.expert_ids, a.expert_weights, T, a.top_k, a.num_experts, s.plan, a.expert_begin,
                a.expert_end);
  const MoePlan& plan = s.plan;
  for (int e : plan.active) check_expert(a, e);
  std::fill(a.y, a.y + T * H, 0.0f);
  if (plan.active.empty()) return;

  s.items.clear();
  // An expert's tokens in equal items of at most kItemTokens (140: 70 + 70, not 128 + 12), so
  // that no item is left with a few tokens: small calls run slower kernels (and under
  // kBF16Batches, fewer than kBatchTokens tokens miss the batch GEMM).
  for (int e : plan.active) {
    const int64_t count = plan.count(e);
    const int64_t parts = (count + kItemTokens - 1) / kItemTokens;
    for (int64_t p = 0, k = 0; p < parts; ++p) {
      const int64_t end = count * (p + 1) / parts;
      s.items.push_back({e, plan.offsets[e] + k, end - k, 0});
      k = end;
    }
  }

  // Slice alignment and bytes per expert over every active expert (formats may differ).
  int64_t up_align = kRowAlign, down_align = kRowAlign, up_bytes = 0, down_bytes = 0;
  for (int e : plan.active) {
    const ExpertWeights& w = a.experts[e];
    up_align = std::lcm(up_align, std::lcm(row_alignment(w.gate), row_alignment(w.up)));
    down_align = std::lcm(down_align, row_alignment(w.down));
    up_bytes = std::max(up_bytes, (weight_row_bytes(w.gate) + weight_row_bytes(w.up)) * I);
    down_bytes = std::max(down_bytes, weight_row_bytes(w.down) * H);
  }
  const bool single_token = T == 1 && !a.bf16_activations;
  for (size_t begin = 0; begin < s.items.size();) {
    // A wave: items up to kWaveTokens assignments in all (at least one item).
    size_t end = begin;
    int64_t rows = 0;
    while (end < s.items.size() && (end == begin || rows + s.items[end].count <= kWaveTokens)) {
      s.items[end].row = rows;
      rows += s.items[end++].count;
    }
    if (s.act.size() < static_cast<size_t>(rows * I)) s.act.resize(rows * I);
    Wave wave;
    wave.args = &a;
    wave.plan = &plan;
    wave.linear = &linear;
    wave.items = s.items.data() + begin;
    wave.num_items = static_cast<int>(end - begin);
    wave.single_token = single_token;
    wave.act = s.act.data();
    if (single_token) {
      wave.xs = a.x;
    } else {
      if (s.xs.size() < static_cast<size_t>(rows * H)) s.xs.resize(rows * H);
      for (size_t i = begin; i < end; ++i) {
        const Item& item = s.items[i];
        for (int64_t k = 0; k < item.count; ++k)
          std::copy_n(a.x + int64_t(plan.tokens[item.first + k]) * H, H,
                      s.xs.data() + (item.row + k) * H);
      }
      if (a.bf16_activations) round_to_bf16(s.xs.data(), rows * H);
      wave.xs = s.xs.data();
    }
    wave.align = up_align;
    wave.parts = phase_parts(pool, wave.num_items * up_bytes, I, up_align);
    run_parts(pool, wave, gate_up_part);
    // Per-token and per-group scales need whole activation rows: quantize between the phases.
    reference::quantize_activations(wave.act, rows, I, a.down_input_quant);
    wave.align = down_align;
    wave.parts = phase_parts(pool, wave.num_items * down_bytes, H, down_align);
    run_parts(pool, wave, down_part);
    begin = end;
  }
}

}  // namespace minimax
