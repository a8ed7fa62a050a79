// vLLM's --speculative-config JSON for the draft-free methods (runtime/spec/speculative_config.h).
#include "runtime/spec/speculative_config.h"

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace minimax {
namespace {

using nlohmann::json;

int int_key(const json& value, std::string_view flag, const std::string& key, int lo, int hi) {
  if (!value.is_number_integer())
    fail("{}: '{}' must be an integer, got {}", flag, key, value.dump());
  const int64_t v = value.get<int64_t>();
  if (v < lo || v > hi) fail("{}: '{}' must be in [{}, {}], got {}", flag, key, lo, hi, v);
  return static_cast<int>(v);
}

double real_key(const json& value, std::string_view flag, const std::string& key, double lo,
                double hi) {
  if (!value.is_number()) fail("{}: '{}' must be a number, got {}", flag, key, value.dump());
  const double v = value.get<double>();
  if (!(v >= lo && v <= hi)) fail("{}: '{}' must be in [{}, {}], got {}", flag, key, lo, hi, v);
  return v;
}

// vLLM keys that choose a draft model or head: named, so that a copied vLLM line says what is
// missing rather than "unknown key".
bool is_draft_model_key(const std::string& key) {
  return key == "model" || key == "draft_tensor_parallel_size" || key == "quantization" ||
         key == "revision" || key == "max_model_len" || key == "draft_model";
}

}  // namespace

std::string_view draft_method_name(DraftMethod method) {
  switch (method) {
    case DraftMethod::kNgram:
      return "ngram";
    case DraftMethod::kSuffix:
      return "suffix";
    case DraftMethod::kEagle3:
      return "eagle3";
  }
  return "unknown";
}

SpeculativeConfig parse_speculative_config(std::string_view json_text, std::string_view flag) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    fail("{}: not valid JSON ({}): {}", flag, e.what(), json_text);
  }
  if (!root.is_object())
    fail(
        "{}: must be a JSON object such as {{\"method\": \"ngram\", \"num_speculative_tokens\": "
        "8}}",
        flag);
  SpeculativeConfig config;
  auto method = root.find("method");
  if (method == root.end() || !method->is_string())
    fail("{}: 'method' is required: \"ngram\" (prompt lookup) or \"suffix\" (suffix decoding)",
         flag);
  const std::string name = method->get<std::string>();
  if (name == "ngram") {
    config.method = DraftMethod::kNgram;
  } else if (name == "suffix") {
    config.method = DraftMethod::kSuffix;
    config.num_speculative_tokens = config.suffix_max_tree_depth;  // vLLM's default for suffix
  } else if (name == "eagle3") {
    config.method = DraftMethod::kEagle3;
    config.num_speculative_tokens = kEagle3DefaultTokens;
  } else {
    fail(
        "{}: method '{}' is not supported; supported: \"ngram\", \"suffix\" (draft-free) and "
        "\"eagle3\" (an EAGLE-3 head; other draft models are not loaded)",
        flag, name);
  }
  for (const auto& [key, value] : root.items()) {
    if (key == "method") continue;
    if (key == "num_speculative_tokens") {
      config.num_speculative_tokens = int_key(value, flag, key, 1, 64);
    } else if (key == "prompt_lookup_min" || key == "prompt_lookup_max") {
      if (config.method != DraftMethod::kNgram)
        fail("{}: '{}' applies to method \"ngram\" only", flag, key);
      (key == "prompt_lookup_min" ? config.prompt_lookup_min : config.prompt_lookup_max) =
          int_key(value, flag, key, 1, 64);
    } else if (key.starts_with("suffix_decoding_")) {
      if (config.method != DraftMethod::kSuffix)
        fail("{}: '{}' applies to method \"suffix\" only", flag, key);
      if (key == "suffix_decoding_max_tree_depth")
        config.suffix_max_tree_depth = int_key(value, flag, key, 1, 64);
      else if (key == "suffix_decoding_max_cached_requests")
        config.suffix_max_cached_requests = int_key(value, flag, key, 0, 1000000);
      else if (key == "suffix_decoding_max_spec_factor")
        config.suffix_max_spec_factor = real_key(value, flag, key, 0.0, 64.0);
      else if (key == "suffix_decoding_min_token_prob")
        config.suffix_min_token_prob = real_key(value, flag, key, 0.0, 1.0);
      else
        fail("{}: unknown key '{}'", flag, key);
    } else if (key == "adaptive") {
      if (!value.is_boolean()) fail("{}: 'adaptive' must be true or false", flag);
      config.adaptive = value.get<bool>();
    } else if (key == "model" && config.method == DraftMethod::kEagle3) {
      if (!value.is_string() || value.get<std::string>().empty())
        fail("{}: 'model' must be the EAGLE-3 head's directory, got {}", flag, value.dump());
      config.model = value.get<std::string>();
    } else if (is_draft_model_key(key)) {
      fail(
          "{}: '{}' selects a draft model, which is not supported; use method \"ngram\", "
          "\"suffix\" or \"eagle3\" (with 'model', the head's directory)",
          flag, key);
    } else {
      fail(
          "{}: unknown key '{}' (known: method, num_speculative_tokens, prompt_lookup_min, "
          "prompt_lookup_max, model (eagle3), suffix_decoding_max_tree_depth, "
          "suffix_decoding_max_cached_requests, "
          "suffix_decoding_max_spec_factor, suffix_decoding_min_token_prob, adaptive)",
          flag, key);
    }
  }
  if (config.method == DraftMethod::kEagle3 && config.model.empty())
    fail("{}: method \"eagle3\" needs 'model', the EAGLE-3 head's directory", flag);
  if (config.method == DraftMethod::kNgram && config.prompt_lookup_min > config.prompt_lookup_max)
    fail("{}: prompt_lookup_min ({}) is above prompt_lookup_max ({})", flag,
         config.prompt_lookup_min, config.prompt_lookup_max);
  return config;
}

std::string speculative_config_json(const SpeculativeConfig& config) {
  json out = {{"method", draft_method_name(config.method)},
              {"num_speculative_tokens", config.num_speculative_tokens}};
  if (config.method == DraftMethod::kNgram) {
    out["prompt_lookup_min"] = config.prompt_lookup_min;
    out["prompt_lookup_max"] = config.prompt_lookup_max;
  } else if (config.method == DraftMethod::kEagle3) {
    out["model"] = config.model;
  } else {
    out["suffix_decoding_max_tree_depth"] = config.suffix_max_tree_depth;
    out["suffix_decoding_max_cached_requests"] = config.suffix_max_cached_requests;
    out["suffix_decoding_max_spec_factor"] = config.suffix_max_spec_factor;
    out["suffix_decoding_min_token_prob"] = config.suffix_min_token_prob;
  }
  out["adaptive"] = config.adaptive;
  return out.dump();
}

}  // namespace minimax
