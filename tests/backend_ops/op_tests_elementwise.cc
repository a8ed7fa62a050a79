// The inputs and calls of the element-wise, data-movement, norm and position ops.
#include <algorithm>

#include "kernels/kv_codec.h"
#include "op_inputs.h"

namespace minimax {
namespace {

int64_t values_of(const OpCase& c) { return c.rows * c.cols; }

std::vector<float> concat(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// y += x, y = x: one vector in, one out.
class AddOrCopyInputs : public OpInputs {
 public:
  AddOrCopyInputs(const OpCase& c, std::mt19937& rng)
      : c_(c), y_(normal_floats(values_of(c), rng)), x_(normal_floats(values_of(c), rng)) {}
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    const int64_t n = values_of(c_);
    float* y = c_.op == Op::kAdd ? dev.put(y_) : dev.outputs(n);
    const float* x = dev.put(x_);
    if (c_.op == Op::kAdd) {
      dev.ops().add(y, x, n, pool);
    } else {
      dev.ops().copy(y, x, n);
    }
    return {dev.get(y, n), {}};
  }

 private:
  OpCase c_;
  std::vector<float> y_, x_;
};

// T rows picked (with repeats, first and last included) from `rows` rows of `cols`.
class GatherRowsInputs : public OpInputs {
 public:
  GatherRowsInputs(const OpCase& c, std::mt19937& rng)
      : c_(c), x_(normal_floats(values_of(c), rng)) {
    std::uniform_int_distribution<int32_t> row(0, static_cast<int32_t>(c.rows - 1));
    for (int64_t t = 0; t < c.T; ++t) picks_.push_back(row(rng));
    picks_.front() = 0;
    picks_.back() = static_cast<int32_t>(c.rows - 1);
  }
  OpOutputs run(Backend& backend, ThreadPool*) const override {
    OnBackend dev(backend);
    float* out = dev.outputs(c_.T * c_.cols);
    dev.ops().gather_rows(dev.put(x_), c_.cols, dev.put(picks_), c_.T, out);
    return {dev.get(out, c_.T * c_.cols), {}};
  }

 private:
  OpCase c_;
  std::vector<float> x_;
  std::vector<int32_t> picks_;
};

// This step's T rows into a cache holding `context` slots; the output is the whole storage, read
// back through the codec (equal floats mean equal codes: the codec decodes injectively).
class StoreKvInputs : public OpInputs {
 public:
  StoreKvInputs(const OpCase& c, std::mt19937& rng) : c_(c) {
    const int64_t slots = c.context + c.T;
    pages_ = shuffled_page_table(slots, c.page_size, rng);
    storage_ = random_cache(c.context, width(), c.kv, pages_, c.page_size, rng, 1.0f);
    storage_.resize(cache_rows(slots, c.page_size) * width() * kv_dtype_bytes(c.kv), 0);
    rows_ = normal_floats(c.T * width(), rng, 40.0f);  // fp8 saturates beyond ±448
    for (int64_t t = 0; t < c.T; ++t) positions_.push_back(static_cast<int32_t>(c.context + t));
  }
  OpOutputs run(Backend& backend, ThreadPool*) const override {
    OnBackend dev(backend);
    KvStoreArgs a;
    a.rows = dev.put(rows_);
    a.T = c_.T;
    a.width = width();
    a.positions = dev.put(positions_);
    a.page_table = pages_.empty() ? nullptr : dev.put(pages_);
    a.page_size = c_.page_size;
    a.storage = dev.put(storage_);
    a.dtype = c_.kv;
    dev.ops().store_kv(a);
    const std::vector<uint8_t> stored =
        dev.get(static_cast<const uint8_t*>(a.storage), static_cast<int64_t>(storage_.size()));
    const int64_t storage_rows = cache_rows(c_.context + c_.T, c_.page_size);
    std::vector<float> values(storage_rows * width());
    for (int64_t r = 0; r < storage_rows; ++r)
      decode_kv_row(stored.data() + r * width() * kv_dtype_bytes(c_.kv), width(), c_.kv,
                    values.data() + r * width());
    return {values, {}};
  }

 private:
  int64_t width() const { return int64_t{c_.kv_heads} * c_.head_dim; }
  OpCase c_;
  std::vector<int32_t> pages_, positions_;
  std::vector<uint8_t> storage_;
  std::vector<float> rows_;
};

// rms_norm, sum_squares and rms_norm_from_sums over `rows` rows of `cols`. The sums given to
// rms_norm_from_sums are this share's plus another rank's share of as many values.
class NormInputs : public OpInputs {
 public:
  NormInputs(const OpCase& c, std::mt19937& rng)
      : c_(c),
        x_(normal_floats(values_of(c), rng, 3.0f)),
        weight_(normal_floats(c.cols, rng, 0.5f)) {
    for (int64_t r = 0; r < c.rows; ++r) {
      double sum = 0;
      for (int64_t i = 0; i < c.cols; ++i) sum += double(x_[r * c.cols + i]) * x_[r * c.cols + i];
      const std::vector<float> other = normal_floats(c.cols, rng, 3.0f);
      for (float v : other) sum += double(v) * v;
      sums_.push_back(static_cast<float>(sum));
    }
  }
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    const float* x = dev.put(x_);
    const float* w = dev.put(weight_);
    const float eps = 1e-6f;
    if (c_.op == Op::kSumSquares) {
      float* out = dev.outputs(c_.rows);
      dev.ops().sum_squares(x, c_.rows, c_.cols, out);
      return {dev.get(out, c_.rows), {}};
    }
    float* out = dev.outputs(values_of(c_));
    if (c_.op == Op::kRmsNorm) {  // out of place, then in place (ops.h: `out` may equal `x`)
      dev.ops().rms_norm(x, c_.rows, c_.cols, w, eps, c_.add_one, out, pool);
      float* in_place = dev.put(x_);
      dev.ops().rms_norm(in_place, c_.rows, c_.cols, w, eps, c_.add_one, in_place, pool);
      return {concat(dev.get(out, values_of(c_)), dev.get(in_place, values_of(c_))), {}};
    } else {
      dev.ops().rms_norm_from_sums(x, c_.rows, c_.cols, dev.put(sums_), 2 * c_.cols, w, eps,
                                   c_.add_one, out);
    }
    return {dev.get(out, values_of(c_)), {}};
  }

 private:
  OpCase c_;
  std::vector<float> x_, weight_, sums_;
};

// RoPE in place on [T, heads, head_dim] at positions context, context + 1, ...
class RopeInputs : public OpInputs {
 public:
  RopeInputs(const OpCase& c, std::mt19937& rng)
      : c_(c), x_(normal_floats(c.T * c.heads * c.head_dim, rng)) {
    for (int64_t t = 0; t < c.T; ++t) positions_.push_back(static_cast<int32_t>(c.context + t));
  }
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    float* x = dev.put(x_);
    const RopeParams params{c_.heads, c_.head_dim, c_.rotary_dim, 5e6};  // M2's and M3's theta
    dev.ops().rope(x, c_.T, dev.put(positions_), params, pool);
    return {dev.get(x, static_cast<int64_t>(x_.size())), {}};
  }

 private:
  OpCase c_;
  std::vector<float> x_;
  std::vector<int32_t> positions_;
};

// The gated activation over rows·cols values; wide enough (sd 4) that SwiGLU-OAI's clamps at ±7
// are reached.
class GluInputs : public OpInputs {
 public:
  GluInputs(const OpCase& c, std::mt19937& rng)
      : c_(c),
        gate_(normal_floats(values_of(c), rng, 4.0f)),
        up_(normal_floats(values_of(c), rng, 4.0f)) {
    if (gate_.size() > 4) {  // the edges: exp(−g) overflowing, the clamp, zero
      gate_[0] = -120.0f;
      gate_[1] = 7.0f;
      up_[2] = -7.5f;
      gate_[3] = 0.0f;
    }
  }
  // Out of place, then in place over the gate and over the up input (ops.h: `out` may be either).
  OpOutputs run(Backend& backend, ThreadPool*) const override {
    OnBackend dev(backend);
    const int64_t n = values_of(c_);
    GluParams params;
    params.kind = c_.glu;
    float* out = dev.outputs(n);
    dev.ops().glu(dev.put(gate_), dev.put(up_), n, params, out);
    float* gate = dev.put(gate_);
    dev.ops().glu(gate, dev.put(up_), n, params, gate);
    float* up = dev.put(up_);
    dev.ops().glu(dev.put(gate_), up, n, params, up);
    return {concat(concat(dev.get(out, n), dev.get(gate, n)), dev.get(up, n)), {}};
  }

 private:
  OpCase c_;
  std::vector<float> gate_, up_;
};

// FP8 activation emulation in place on [rows, cols].
class QuantizeInputs : public OpInputs {
 public:
  QuantizeInputs(const OpCase& c, std::mt19937& rng)
      : c_(c), x_(normal_floats(values_of(c), rng, 5.0f)) {}
  OpOutputs run(Backend& backend, ThreadPool*) const override {
    OnBackend dev(backend);
    float* x = dev.put(x_);
    ActQuant q;
    q.kind = c_.quant;
    q.fixed_scale = 56.0f / 448.0f;
    dev.ops().quantize_activations(x, c_.rows, c_.cols, q);
    return {dev.get(x, values_of(c_)), {}};
  }

 private:
  OpCase c_;
  std::vector<float> x_;
};

}  // namespace

std::unique_ptr<OpInputs> make_elementwise_inputs(const OpCase& c, std::mt19937& rng) {
  switch (c.op) {
    case Op::kAdd:
    case Op::kCopy:
      return std::make_unique<AddOrCopyInputs>(c, rng);
    case Op::kGatherRows:
      return std::make_unique<GatherRowsInputs>(c, rng);
    case Op::kStoreKv:
      return std::make_unique<StoreKvInputs>(c, rng);
    case Op::kRmsNorm:
    case Op::kSumSquares:
    case Op::kRmsNormFromSums:
      return std::make_unique<NormInputs>(c, rng);
    case Op::kRope:
      return std::make_unique<RopeInputs>(c, rng);
    case Op::kGlu:
      return std::make_unique<GluInputs>(c, rng);
    case Op::kQuantizeActivations:
      return std::make_unique<QuantizeInputs>(c, rng);
    default:
      return nullptr;
  }
}

}  // namespace minimax
