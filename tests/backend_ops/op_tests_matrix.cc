// The inputs and calls of the ops that read weights (linear, embedding, moe) and of the router.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "op_inputs.h"

namespace minimax {
namespace {

// y = W·x for T tokens; W ~ N(0, 1/cols) so that y is O(1).
class LinearInputs : public OpInputs {
 public:
  LinearInputs(const OpCase& c, std::mt19937& rng)
      : c_(c),
        w_(random_weight(c.weights, c.rows, c.cols, 1 / std::sqrt(double(c.cols)), rng)),
        x_(normal_floats(c.T * c.cols, rng)) {}
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    float* y = dev.outputs(c_.T * c_.rows);
    dev.ops().linear(dev.put(w_), dev.put(x_), c_.T, y, pool);
    return {dev.get(y, c_.T * c_.rows), {}};
  }

 private:
  OpCase c_;
  StoredWeight w_;
  std::vector<float> x_;
};

// T rows of a [rows, cols] table, the first and last rows among them.
class EmbeddingInputs : public OpInputs {
 public:
  EmbeddingInputs(const OpCase& c, std::mt19937& rng)
      : c_(c), table_(random_weight(c.weights, c.rows, c.cols, 1.0, rng)) {
    std::uniform_int_distribution<int32_t> token(0, static_cast<int32_t>(c.rows - 1));
    for (int64_t t = 0; t < c.T; ++t) tokens_.push_back(token(rng));
    tokens_.front() = 0;
    tokens_.back() = static_cast<int32_t>(c.rows - 1);
  }
  OpOutputs run(Backend& backend, ThreadPool*) const override {
    OnBackend dev(backend);
    float* out = dev.outputs(c_.T * c_.cols);
    dev.ops().embedding(dev.put(table_), dev.put(tokens_), c_.T, out);
    return {dev.get(out, c_.T * c_.cols), {}};
  }

 private:
  OpCase c_;
  StoredWeight table_;
  std::vector<int32_t> tokens_;
};

// Top-k of sigmoid(logits) + bias, renormalised and scaled by 2 (M3's routed scale).
class RouteInputs : public OpInputs {
 public:
  RouteInputs(const OpCase& c, std::mt19937& rng)
      : c_(c),
        logits_(normal_floats(c.T * c.experts, rng, 2.0f)),
        bias_(normal_floats(c.experts, rng, 0.1f)) {}
  OpOutputs run(Backend& backend, ThreadPool*) const override {
    OnBackend dev(backend);
    RouterArgs a;
    a.logits = dev.put(logits_);
    a.T = c_.T;
    a.num_experts = c_.experts;
    a.top_k = c_.top_k;
    a.selection_bias = dev.put(bias_);
    a.routed_scale = 2.0f;
    a.expert_ids = dev.put(std::vector<int32_t>(c_.T * c_.top_k, -1));
    a.expert_weights = dev.outputs(c_.T * c_.top_k);
    dev.ops().route(a);
    return {dev.get(a.expert_weights, c_.T * c_.top_k), dev.get(a.expert_ids, c_.T * c_.top_k)};
  }

 private:
  OpCase c_;
  std::vector<float> logits_, bias_;
};

// Grouped MoE over `experts` experts of hidden = cols, inter = rows; expert e uses weight set
// e % 3 (so real widths stay affordable), each token a random choice of top_k experts.
class MoeInputs : public OpInputs {
 public:
  MoeInputs(const OpCase& c, std::mt19937& rng) : c_(c) {
    const double sd_in = 2 / std::sqrt(double(c.cols)), sd_out = 1 / std::sqrt(double(c.rows));
    for (int s = 0; s < std::min(c.experts, 3); ++s) {
      sets_.push_back(random_weight(c.weights, c.rows, c.cols, sd_in, rng));
      sets_.push_back(random_weight(c.weights, c.rows, c.cols, sd_in, rng));
      sets_.push_back(random_weight(c.weights, c.cols, c.rows, sd_out, rng));
    }
    x_ = normal_floats(c.T * c.cols, rng, 1.5f);
    std::uniform_real_distribution<float> weight(0.05f, 0.6f);
    std::vector<int32_t> order(c.experts);
    for (int64_t t = 0; t < c.T; ++t) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (int j = 0; j < c.top_k; ++j) {
        ids_.push_back(order[j]);
        weights_.push_back(weight(rng));
      }
    }
  }
  OpOutputs run(Backend& backend, ThreadPool* pool) const override {
    OnBackend dev(backend);
    std::vector<WeightView> views;
    for (const StoredWeight& w : sets_) views.push_back(dev.put(w));
    std::vector<ExpertWeights> experts;
    const int sets = static_cast<int>(sets_.size() / 3);
    for (int e = 0; e < c_.experts; ++e)
      experts.push_back(
          {views[3 * (e % sets)], views[3 * (e % sets) + 1], views[3 * (e % sets) + 2]});
    MoeArgs a;
    a.experts =
        experts.data();  // the table of views is host memory; the views point at the backend's
    a.num_experts = c_.experts;
    a.hidden = c_.cols;
    a.inter = c_.rows;
    a.x = dev.put(x_);
    a.T = c_.T;
    a.expert_ids = dev.put(ids_);
    a.expert_weights = dev.put(weights_);
    a.top_k = c_.top_k;
    a.act.kind = c_.glu;
    a.down_input_quant.kind = c_.quant;
    a.down_input_quant.fixed_scale = 56.0f / 448.0f;
    a.bf16_activations = c_.bf16_moe;
    a.y = dev.outputs(c_.T * c_.cols);
    dev.ops().moe(a, pool);
    return {dev.get(a.y, c_.T * c_.cols), {}};
  }

 private:
  OpCase c_;
  std::vector<StoredWeight> sets_;  // [set][gate, up, down]
  std::vector<float> x_, weights_;
  std::vector<int32_t> ids_;
};

}  // namespace

std::unique_ptr<OpInputs> make_matrix_inputs(const OpCase& c, std::mt19937& rng) {
  switch (c.op) {
    case Op::kLinear:
      return std::make_unique<LinearInputs>(c, rng);
    case Op::kEmbedding:
      return std::make_unique<EmbeddingInputs>(c, rng);
    case Op::kRoute:
      return std::make_unique<RouteInputs>(c, rng);
    case Op::kMoe:
      return std::make_unique<MoeInputs>(c, rng);
    default:
      return nullptr;
  }
}

}  // namespace minimax
