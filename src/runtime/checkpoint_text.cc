// Sampling defaults, EOS ids, special tokens and chat template of a checkpoint directory
// (runtime/checkpoint_text.h).
#include "runtime/checkpoint_text.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "checkpoint/arch/architecture.h"
#include "text/jinja/builtin_templates.h"

namespace minimax {
namespace {

using nlohmann::json;

// A number field, or `fallback` when absent or null.
double number_field(const json& j, const char* key, double fallback, const std::string& file) {
  if (!j.contains(key) || j[key].is_null()) return fallback;
  if (!j[key].is_number())
    fail("{}: field '{}' must be a number, got {}", file, key, j[key].dump());
  return j[key].get<double>();
}

void add_unique(std::vector<int32_t>& ids, int32_t id) {
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

void read_generation_config(const std::string& path, CheckpointText& out) {
  const json j = read_json_file(path);
  if (!j.is_object()) fail("{}: expected a JSON object", path);
  SamplingParams& s = out.sampling;
  s.temperature = static_cast<float>(number_field(j, "temperature", s.temperature, path));
  s.top_p = static_cast<float>(number_field(j, "top_p", s.top_p, path));
  s.top_k = static_cast<int>(number_field(j, "top_k", s.top_k, path));
  s.min_p = static_cast<float>(number_field(j, "min_p", s.min_p, path));
  s.repetition_penalty =
      static_cast<float>(number_field(j, "repetition_penalty", s.repetition_penalty, path));
  out.max_new_tokens = static_cast<int64_t>(number_field(j, "max_new_tokens", 0, path));
  with_context(path, [&] { validate_sampling_params(s); });
  if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
    const json& eos = j["eos_token_id"];
    const json list = eos.is_array() ? eos : json::array({eos});
    for (const json& id : list) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
        fail("{}: field 'eos_token_id' must be a token id or a list of them, got {}", path,
             eos.dump());
      add_unique(out.eos_token_ids, id.get<int32_t>());
    }
  }
}

// tokenizer_config writes special tokens as a string or as {"content": "...", ...}.
std::string token_string(const json& j, const char* key, const std::string& file) {
  if (!j.contains(key) || j[key].is_null()) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  fail("{}: field '{}' must be a string or an object with 'content', got {}", file, key, v.dump());
}

// A string, or a list of {"name", "template"} from which "default" is taken.
std::string template_field(const json& v, const std::string& file) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    for (const json& entry : v)
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string())
        return entry["template"].get<std::string>();
    fail("{}: field 'chat_template' is a list without a 'default' template", file);
  }
  fail("{}: field 'chat_template' must be a string or a list of named templates", file);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CheckpointText load_checkpoint_text(const std::string& dir, const BpeTokenizer& tokenizer,
                                    Arch arch) {
  namespace fs = std::filesystem;
  CheckpointText out;
  const std::string generation_path = dir + "/generation_config.json";
  if (fs::exists(generation_path)) read_generation_config(generation_path, out);

  const std::string tokenizer_config_path = dir + "/tokenizer_config.json";
  if (fs::exists(tokenizer_config_path)) {
    const json j = read_json_file(tokenizer_config_path);
    if (!j.is_object()) fail("{}: expected a JSON object", tokenizer_config_path);
    out.bos_token = token_string(j, "bos_token", tokenizer_config_path);
    out.eos_token = token_string(j, "eos_token", tokenizer_config_path);
    if (!out.bos_token.empty()) out.bos_token_id = tokenizer.token_id(out.bos_token);
    if (j.contains("add_bos_token") && !j["add_bos_token"].is_null()) {
      if (!j["add_bos_token"].is_boolean())
        fail("{}: field 'add_bos_token' must be true or false, got {}", tokenizer_config_path,
             j["add_bos_token"].dump());
      out.add_bos_token = j["add_bos_token"].get<bool>();
    }
    if (!out.eos_token.empty()) {
      const auto id = tokenizer.token_id(out.eos_token);
      if (!id)
        fail("{}: field 'eos_token': '{}' is not a token of {}", tokenizer_config_path,
             out.eos_token, tokenizer.source());
      add_unique(out.eos_token_ids, *id);
    }
    if (j.contains("chat_template") && !j["chat_template"].is_null()) {
      out.chat_template = template_field(j["chat_template"], tokenizer_config_path);
      out.chat_template_origin = tokenizer_config_path;
    }
  }
  const std::string jinja_path = dir + "/chat_template.jinja";
  if (out.chat_template.empty() && fs::exists(jinja_path)) {
    out.chat_template = read_text_file(jinja_path);
    out.chat_template_origin = jinja_path;
  }
  if (out.chat_template.empty()) {
    const std::string name(architecture_record(arch).chat_template);
    out.chat_template = std::string(builtin_chat_template(name).value_or(""));
    out.chat_template_origin = "built-in " + name;
  }
  return out;
}

ThinkMarkers think_markers(Arch arch) {
  const ArchitectureRecord& record = architecture_record(arch);
  return {std::string(record.markers.think_open), std::string(record.markers.think_close)};
}

}  // namespace minimax
