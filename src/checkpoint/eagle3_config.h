// Typed view of an EAGLE-3 draft head's `config.json`, in the layout vLLM's llama_eagle3 model
// reads (docs/eagle3.md): a Llama-style config whose architecture name contains "Eagle3", one
// decoder layer, an optional smaller draft vocabulary, and the target layers whose hidden states
// the head reads (eagle_config.eagle_aux_hidden_state_layer_ids).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace minimax {

struct Eagle3Config {
  std::string architecture;  // architectures[0], e.g. "LlamaForCausalLMEagle3"
  int hidden_size = 0, intermediate_size = 0;
  int num_heads = 0, num_kv_heads = 0, head_dim = 0;
  double rms_norm_eps = 1e-6, rope_theta = 10000;
  int vocab_size = 0;          // the target's vocabulary (token ids the head reads and proposes)
  int draft_vocab_size = 0;    // rows of lm_head; d2t maps them to target ids
  int target_hidden_size = 0;  // width of one tapped hidden state (hidden_size when absent)
  // Target layers tapped: the hidden state entering each (the residual stream after that many
  // layers), concatenated in this order into fc's input.
  std::vector<int> tap_layers;
  // vLLM's norm_before_residual: the residual is the normed fused hidden state, not the raw one.
  bool norm_before_residual = false;
};

// Parses and checks `config` (read from `path`, named in errors) against a target of
// `target_layers` layers, `target_hidden` wide, with `target_vocab` tokens. Anything the head's
// forward pass would not compute as published is refused with the field named.
Eagle3Config parse_eagle3_config(const nlohmann::json& config, const std::string& path,
                                 int target_layers, int target_hidden, int target_vocab);
// config.json of directory `dir`.
Eagle3Config load_eagle3_config(const std::string& dir, int target_layers, int target_hidden,
                                int target_vocab);

// vLLM's default taps for an L-layer target when the config names none: 2, L/2 and L-3.
std::vector<int> default_eagle3_tap_layers(int target_layers);

}  // namespace minimax
