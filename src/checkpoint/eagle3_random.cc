// Random EAGLE-3 head writer (checkpoint/eagle3_random.h).
#include "checkpoint/eagle3_random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/atomic_output.h"
#include "base/error.h"
#include "checkpoint/eagle3_config.h"
#include "formats/float_formats.h"
#include "formats/safetensors_writer.h"

namespace minimax {
namespace {

// splitmix64: a fixed, portable stream (the same seed writes the same bytes everywhere).
struct Stream {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  float uniform() { return static_cast<float>(next() >> 40) / static_cast<float>(1 << 24); }
};

// bf16 values uniform with standard deviation 1/sqrt(fan_in), so activations keep their scale.
std::vector<uint8_t> random_bf16(Stream& stream, int64_t rows, int64_t cols) {
  const float bound = std::sqrt(3.0f / static_cast<float>(cols));
  std::vector<uint8_t> out(static_cast<size_t>(rows * cols) * 2);
  for (size_t i = 0; i < out.size() / 2; ++i) {
    const uint16_t b = f32_to_bf16((2 * stream.uniform() - 1) * bound);
    std::memcpy(out.data() + 2 * i, &b, 2);
  }
  return out;
}

std::vector<uint8_t> ones_bf16(int64_t n) {
  std::vector<uint8_t> out(static_cast<size_t>(n) * 2);
  const uint16_t one = f32_to_bf16(1.0f);
  for (int64_t i = 0; i < n; ++i) std::memcpy(out.data() + 2 * i, &one, 2);
  return out;
}

}  // namespace

void write_random_eagle3_head(const std::string& dir, const ModelConfig& target,
                              const Eagle3HeadShape& shape, uint64_t seed, bool force) {
  const int64_t H = target.hidden_size, V = target.vocab_size;
  const int64_t I =
      shape.intermediate_size > 0 ? shape.intermediate_size : (H * 8 / 3 + 63) / 64 * 64;
  const int64_t Vd =
      shape.draft_vocab_size > 0 ? shape.draft_vocab_size : std::min<int64_t>(V, 32000);
  if (Vd > V) fail("EAGLE-3 head: draft vocabulary {} is larger than the target's {}", Vd, V);
  const std::vector<int> taps = default_eagle3_tap_layers(target.num_layers);
  if (taps.back() < 0)
    fail("EAGLE-3 head: the target has {} layers; the default taps (2, L/2, L-3) need at least 3",
         target.num_layers);
  const int64_t q_width = int64_t{target.num_heads} * target.head_dim,
                kv_width = int64_t{target.num_kv_heads} * target.head_dim;
  nlohmann::ordered_json config = {
      {"architectures", {"LlamaForCausalLMEagle3"}},
      {"model_type", "llama"},
      {"hidden_act", "silu"},
      {"hidden_size", H},
      {"intermediate_size", I},
      {"num_hidden_layers", 1},
      {"num_attention_heads", target.num_heads},
      {"num_key_value_heads", target.num_kv_heads},
      {"head_dim", target.head_dim},
      {"rms_norm_eps", 1e-6},
      {"rope_theta", target.rope_theta},
      {"max_position_embeddings", target.max_position_embeddings},
      {"vocab_size", V},
      {"draft_vocab_size", Vd},
      {"target_hidden_size", H},
      {"tie_word_embeddings", false},
      {"torch_dtype", "bfloat16"},
      {"eagle_config",
       {{"eagle_aux_hidden_state_layer_ids", taps}, {"use_aux_hidden_state", true}}},
  };
  // Draft id i proposes target id i·V/Vd: spread over the vocabulary, so that the mapping is
  // exercised (d2t holds the offsets, t2d marks the ids that have a draft id).
  std::vector<int64_t> d2t(static_cast<size_t>(Vd));
  std::vector<uint8_t> t2d(static_cast<size_t>(V), 0);
  for (int64_t i = 0; i < Vd; ++i) {
    const int64_t t = i * V / Vd;
    d2t[static_cast<size_t>(i)] = t - i;
    t2d[static_cast<size_t>(t)] = 1;
  }
  struct Matrix {
    std::string name;
    int64_t rows, cols;
  };
  const std::vector<Matrix> matrices = {
      {"fc.weight", H, 3 * H},
      {"midlayer.self_attn.q_proj.weight", q_width, 2 * H},
      {"midlayer.self_attn.k_proj.weight", kv_width, 2 * H},
      {"midlayer.self_attn.v_proj.weight", kv_width, 2 * H},
      {"midlayer.self_attn.o_proj.weight", H, q_width},
      {"midlayer.mlp.gate_proj.weight", I, H},
      {"midlayer.mlp.up_proj.weight", I, H},
      {"midlayer.mlp.down_proj.weight", H, I},
      {"lm_head.weight", Vd, H},
  };
  const std::vector<std::string> norms = {
      "midlayer.input_layernorm.weight", "midlayer.hidden_norm.weight",
      "midlayer.post_attention_layernorm.weight", "norm.weight"};
  std::vector<TensorDecl> decls;
  for (const Matrix& m : matrices) decls.push_back({m.name, DType::kBF16, {m.rows, m.cols}});
  for (const std::string& n : norms) decls.push_back({n, DType::kBF16, {H}});
  decls.push_back({"d2t", DType::kI64, {Vd}});
  decls.push_back({"t2d", DType::kBOOL, {V}});

  AtomicDirectory out(dir, force);
  write_file_atomic(out.file("config.json"), config.dump(2) + "\n");
  SafetensorsWriter writer(out.file("model.safetensors"), decls, {{"format", "pt"}});
  // The writer's order is by alignment, so each tensor's bytes come from its own stream position:
  // derive one stream per tensor from its declaration index.
  for (const TensorDecl& d : writer.order()) {
    const auto index =
        static_cast<uint64_t>(std::find_if(decls.begin(), decls.end(),
                                           [&](const TensorDecl& x) { return x.name == d.name; }) -
                              decls.begin());
    Stream own{seed * 1000003u + index};
    if (d.name == "d2t") {
      writer.write_tensor(d.name, {reinterpret_cast<const uint8_t*>(d2t.data()), d2t.size() * 8});
    } else if (d.name == "t2d") {
      writer.write_tensor(d.name, t2d);
    } else if (d.shape.size() == 1) {
      writer.write_tensor(d.name, ones_bf16(d.shape[0]));
    } else {
      writer.write_tensor(d.name, random_bf16(own, d.shape[0], d.shape[1]));
    }
  }
  writer.finish();
  out.commit();
}

}  // namespace minimax
