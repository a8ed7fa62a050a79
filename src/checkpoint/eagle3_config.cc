// EAGLE-3 head config.json (checkpoint/eagle3_config.h).
#include "checkpoint/eagle3_config.h"

#include "base/error.h"
#include "checkpoint/model_config.h"

namespace minimax {
namespace {

using nlohmann::json;

int int_field(const json& c, const std::string& path, const char* key, int fallback, int lo) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) {
    if (fallback < lo) fail("{}: '{}' is required", path, key);
    return fallback;
  }
  if (!it->is_number_integer()) fail("{}: '{}' must be an integer, got {}", path, key, it->dump());
  const int64_t v = it->get<int64_t>();
  if (v < lo || v > (int64_t{1} << 30))
    fail("{}: '{}' is {}, expected at least {}", path, key, v, lo);
  return static_cast<int>(v);
}

double real_field(const json& c, const std::string& path, const char* key, double fallback) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return fallback;
  if (!it->is_number() || !(it->get<double>() > 0))
    fail("{}: '{}' must be a positive number, got {}", path, key, it->dump());
  return it->get<double>();
}

bool flag_field(const json& c, const std::string& path, const char* key) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null()) return false;
  if (!it->is_boolean()) fail("{}: '{}' must be true or false, got {}", path, key, it->dump());
  return it->get<bool>();
}

}  // namespace

std::vector<int> default_eagle3_tap_layers(int target_layers) {
  return {2, target_layers / 2, target_layers - 3};
}

Eagle3Config parse_eagle3_config(const json& c, const std::string& path, int target_layers,
                                 int target_hidden, int target_vocab) {
  if (!c.is_object()) fail("{}: expected a JSON object", path);
  Eagle3Config e;
  auto arch = c.find("architectures");
  if (arch == c.end() || !arch->is_array() || arch->empty() || !(*arch)[0].is_string())
    fail("{}: 'architectures' must name the head's class (an EAGLE-3 head's contains 'Eagle3')",
         path);
  e.architecture = (*arch)[0].get<std::string>();
  if (e.architecture.find("Eagle3") == std::string::npos &&
      e.architecture.find("eagle3") == std::string::npos)
    fail("{}: architecture '{}' is not an EAGLE-3 head (its name contains 'Eagle3')", path,
         e.architecture);
  const int layers = int_field(c, path, "num_hidden_layers", -1, 0);
  if (layers != 1)
    fail("{}: 'num_hidden_layers' is {}; an EAGLE-3 head has one decoder layer", path, layers);
  auto act = c.find("hidden_act");
  if (act != c.end() && !(act->is_string() && act->get<std::string>() == "silu"))
    fail("{}: 'hidden_act' is {}; the head's MLP is SiLU-GLU (\"silu\")", path, act->dump());
  for (const char* bias : {"attention_bias", "mlp_bias", "qkv_bias", "bias"})
    if (flag_field(c, path, bias))
      fail("{}: '{}' is true; heads with biases are not supported", path, bias);
  auto scaling = c.find("rope_scaling");
  if (scaling != c.end() && !scaling->is_null()) {
    const json& s = *scaling;
    const std::string type = s.is_object() ? s.value("rope_type", s.value("type", "")) : "";
    if (type != "default")
      fail("{}: 'rope_scaling' {} is not supported (plain RoPE only)", path, s.dump());
  }
  e.hidden_size = int_field(c, path, "hidden_size", -1, 1);
  e.intermediate_size = int_field(c, path, "intermediate_size", -1, 1);
  e.num_heads = int_field(c, path, "num_attention_heads", -1, 1);
  e.num_kv_heads = int_field(c, path, "num_key_value_heads", e.num_heads, 1);
  if (e.num_heads % e.num_kv_heads != 0)
    fail("{}: 'num_attention_heads' ({}) is not a multiple of 'num_key_value_heads' ({})", path,
         e.num_heads, e.num_kv_heads);
  e.head_dim = int_field(c, path, "head_dim", e.hidden_size / e.num_heads, 2);
  if (e.head_dim % 2 != 0) fail("{}: 'head_dim' ({}) must be even for RoPE", path, e.head_dim);
  e.rms_norm_eps = real_field(c, path, "rms_norm_eps", 1e-6);
  e.rope_theta = real_field(c, path, "rope_theta", 10000);
  e.vocab_size = int_field(c, path, "vocab_size", target_vocab, 1);
  if (e.vocab_size != target_vocab)
    fail("{}: 'vocab_size' is {}, but the target model has {} tokens", path, e.vocab_size,
         target_vocab);
  e.draft_vocab_size = int_field(c, path, "draft_vocab_size", e.vocab_size, 1);
  if (e.draft_vocab_size > e.vocab_size)
    fail("{}: 'draft_vocab_size' ({}) is above 'vocab_size' ({})", path, e.draft_vocab_size,
         e.vocab_size);
  e.target_hidden_size = int_field(c, path, "target_hidden_size", e.hidden_size, 1);
  if (e.target_hidden_size != target_hidden)
    fail(
        "{}: the head reads hidden states {} wide ('target_hidden_size', else 'hidden_size'), "
        "but the target model's are {}",
        path, e.target_hidden_size, target_hidden);
  e.norm_before_residual = flag_field(c, path, "norm_before_residual");
  e.tap_layers = default_eagle3_tap_layers(target_layers);
  auto eagle = c.find("eagle_config");
  if (eagle != c.end() && !eagle->is_null()) {
    if (!eagle->is_object()) fail("{}: 'eagle_config' must be an object", path);
    auto aux = eagle->find("use_aux_hidden_state");
    if (aux != eagle->end() && !(aux->is_boolean() && aux->get<bool>()))
      fail(
          "{}: 'eagle_config.use_aux_hidden_state' is {}; only heads that read the tapped "
          "hidden states (EAGLE-3) are supported",
          path, aux->dump());
    auto ids = eagle->find("eagle_aux_hidden_state_layer_ids");
    if (ids != eagle->end() && !ids->is_null()) {
      if (!ids->is_array() || ids->size() != 3)
        fail("{}: 'eagle_config.eagle_aux_hidden_state_layer_ids' must list 3 layers, got {}", path,
             ids->dump());
      e.tap_layers.clear();
      for (const json& id : *ids) {
        if (!id.is_number_integer())
          fail("{}: 'eagle_config.eagle_aux_hidden_state_layer_ids' holds {}, not a layer index",
               path, id.dump());
        e.tap_layers.push_back(id.get<int>());
      }
    }
  }
  for (int layer : e.tap_layers)
    if (layer < 0 || layer >= target_layers)
      fail(
          "{}: tapped layer {} is outside the target's {} layers "
          "(eagle_config.eagle_aux_hidden_state_layer_ids, default 2, L/2, L-3)",
          path, layer, target_layers);
  return e;
}

Eagle3Config load_eagle3_config(const std::string& dir, int target_layers, int target_hidden,
                                int target_vocab) {
  const std::string path = dir + "/config.json";
  return parse_eagle3_config(read_json_file(path), path, target_layers, target_hidden,
                             target_vocab);
}

}  // namespace minimax
