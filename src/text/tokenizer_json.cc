// Loading BpeTokenizer from tokenizer.json: every field is checked, and every error names the
// source file and the JSON path of the field at fault.
#include "base/error.h"
#include "base/log.h"
#include "text/bpe_tokenizer.h"
#include "text/bpe_tokenizer_impl.h"
#include "text/byte_level.h"

namespace minimax {
namespace {

using nlohmann::json;

const json* find_field(const json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

bool bool_field(const json& object, const char* key, bool fallback, const std::string& where) {
  const json* value = find_field(object, key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail("{}.{}: expected true or false", where, key);
  return value->get<bool>();
}

int32_t id_value(const json& value, const std::string& where) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
      value.get<int64_t>() > INT32_MAX - 1) {
    fail("{}: expected a token id (a non-negative integer), got {}", where, value.dump());
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

TokenIdMap parse_vocab(const json& model, const std::string& where) {
  const json* vocab = find_field(model, "vocab");
  if (vocab == nullptr || !vocab->is_object()) fail("{}.vocab: missing or not an object", where);
  TokenIdMap out;
  out.reserve(vocab->size());
  for (const auto& [token, id] : vocab->items()) {
    out[token] = id_value(id, fmt::format("{}.vocab[\"{}\"]", where, token));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_merges(const json& model,
                                                              const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  const json* merges = find_field(model, "merges");
  if (merges == nullptr) return out;
  if (!merges->is_array()) fail("{}.merges: expected an array", where);
  out.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const json& merge = (*merges)[i];
    if (merge.is_string()) {
      // Legacy form "left right": exactly one separating space (tokens never contain one).
      const std::string text = merge.get<std::string>();
      const size_t space = text.find(' ');
      if (space == std::string::npos || text.find(' ', space + 1) != std::string::npos) {
        fail("{}.merges[{}]: expected \"left right\" with one space, got \"{}\"", where, i, text);
      }
      out.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      out.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else {
      fail("{}.merges[{}]: expected \"left right\" or [\"left\", \"right\"], got {}", where, i,
           merge.dump());
    }
  }
  return out;
}

std::unique_ptr<BpeModel> parse_model(const json& root, const std::string& source) {
  const std::string where = source + ": model";
  const json* model = find_field(root, "model");
  if (model == nullptr || !model->is_object()) fail("{}: missing or not an object", where);
  if (const json* type = find_field(*model, "type"); type != nullptr) {
    if (!type->is_string() || type->get<std::string>() != "BPE") {
      fail("{}.type: only \"BPE\" models are supported, got {}", where, type->dump());
    }
  }
  if (const json* dropout = find_field(*model, "dropout");
      dropout != nullptr && (!dropout->is_number() || dropout->get<double>() != 0.0)) {
    fail("{}.dropout: BPE dropout ({}) is not supported for inference", where, dropout->dump());
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* affix = find_field(*model, key);
    if (affix != nullptr && (!affix->is_string() || !affix->get<std::string>().empty())) {
      fail("{}.{}: {} is not supported by a byte-level BPE", where, key, affix->dump());
    }
  }
  TokenIdMap vocab = parse_vocab(*model, where);
  BpeOptions options;
  options.ignore_merges = bool_field(*model, "ignore_merges", false, where);
  options.fuse_unk = bool_field(*model, "fuse_unk", false, where);
  options.byte_fallback = bool_field(*model, "byte_fallback", false, where);
  if (const json* unk = find_field(*model, "unk_token"); unk != nullptr) {
    if (!unk->is_string()) fail("{}.unk_token: expected a string", where);
    const auto it = vocab.find(unk->get<std::string>());
    if (it == vocab.end()) {
      fail("{}.unk_token: '{}' is not in model.vocab", where, unk->get<std::string>());
    }
    options.unk_id = it->second;
  }
  const auto merges = parse_merges(*model, where);
  return std::make_unique<BpeModel>(std::move(vocab), merges, options, where + ".merges");
}

void check_normalizer(const json& root, const std::string& source) {
  const json* normalizer = find_field(root, "normalizer");
  if (normalizer == nullptr) return;
  const std::string where = source + ": normalizer";
  const json* type = normalizer->is_object() ? find_field(*normalizer, "type") : nullptr;
  if (type == nullptr || !type->is_string()) fail("{}.type: missing or not a string", where);
  const std::string name = type->get<std::string>();
  if (name == "Sequence") {
    const json* list = find_field(*normalizer, "normalizers");
    if (list != nullptr && list->is_array() && list->empty()) return;
  } else if (name == "NFC") {
    // NFC needs the Unicode composition tables; text that is already NFC (nearly all text, and
    // everything a model generates) tokenizes identically without it.
    log_warn("{}: NFC is not applied; input that is not already NFC may tokenize differently",
             where);
    return;
  }
  fail("{}: {} is not supported (null and NFC are)", where, normalizer->dump());
}

void check_decoder(const json& root, const std::string& source) {
  const json* decoder = find_field(root, "decoder");
  if (decoder == nullptr) return;
  const json* type = decoder->is_object() ? find_field(*decoder, "type") : nullptr;
  if (type == nullptr || !type->is_string() || type->get<std::string>() != "ByteLevel") {
    fail("{}: decoder: only the ByteLevel decoder is supported, got {}", source, decoder->dump());
  }
}

std::vector<AddedToken> parse_added_tokens(const json& root, const BpeModel& model,
                                           const std::string& source) {
  std::vector<AddedToken> out;
  const json* list = find_field(root, "added_tokens");
  if (list == nullptr) return out;
  if (!list->is_array()) fail("{}: added_tokens: expected an array", source);
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string where = fmt::format("{}: added_tokens[{}]", source, i);
    const json& entry = (*list)[i];
    if (!entry.is_object()) fail("{}: expected an object", where);
    const json* content = find_field(entry, "content");
    if (content == nullptr || !content->is_string() || content->get<std::string>().empty()) {
      fail("{}.content: missing, empty or not a string", where);
    }
    const json* id = find_field(entry, "id");
    if (id == nullptr) fail("{}.id: missing", where);
    AddedToken token;
    token.content = content->get<std::string>();
    token.id = id_value(*id, where + ".id");
    token.special = bool_field(entry, "special", false, where);
    token.single_word = bool_field(entry, "single_word", false, where);
    token.lstrip = bool_field(entry, "lstrip", false, where);
    token.rstrip = bool_field(entry, "rstrip", false, where);
    token.normalized = bool_field(entry, "normalized", !token.special, where);
    // Hugging Face gives a token that is already in the vocabulary its vocabulary id.
    if (const auto vocab_id = model.token_id(token.content); vocab_id && *vocab_id != token.id) {
      log_warn("{}: '{}' has id {} in model.vocab and {} here; using {}", where, token.content,
               *vocab_id, token.id, *vocab_id);
      token.id = *vocab_id;
    }
    out.push_back(std::move(token));
  }
  return out;
}

// Fills the per-id tables and checks that no id is claimed by two different tokens.
void build_id_tables(BpeTokenizer::Impl& impl) {
  int64_t max_id = -1;
  for (const auto& [token, id] : impl.model->vocab()) max_id = std::max<int64_t>(max_id, id);
  for (const AddedToken& token : impl.added_tokens) max_id = std::max<int64_t>(max_id, token.id);
  const size_t size = static_cast<size_t>(max_id + 1);
  impl.id_text.assign(size, std::string());
  impl.id_special.assign(size, 0);
  std::vector<uint8_t> from_vocab(size, 0);
  for (const auto& [token, id] : impl.model->vocab()) {
    impl.id_text[id] = token;
    from_vocab[id] = 1;
  }
  for (size_t i = 0; i < impl.added_tokens.size(); ++i) {
    const AddedToken& token = impl.added_tokens[i];
    if (from_vocab[token.id] && impl.id_text[token.id] != token.content) {
      fail("{}: added_tokens[{}]: id {} already belongs to model.vocab token '{}'", impl.source, i,
           token.id, impl.id_text[token.id]);
    }
    impl.id_text[token.id] = token.content;
    impl.id_special[token.id] = token.special ? 1 : 0;
    impl.added_ids[token.content] = token.id;
  }
  impl.id_bytes.resize(size);
  for (size_t id = 0; id < size; ++id) {
    if (!append_from_byte_level(impl.id_text[id], impl.id_bytes[id])) {
      impl.id_bytes[id] = impl.id_text[id];
    }
  }
}

}  // namespace

BpeTokenizer BpeTokenizer::from_json(const nlohmann::json& root, const std::string& source) {
  auto impl = std::make_shared<Impl>();
  impl->source = source;
  try {
    if (!root.is_object()) fail("{}: expected a JSON object at the top level", source);
    impl->model = parse_model(root, source);
    check_normalizer(root, source);
    check_decoder(root, source);
    const json* pre = find_field(root, "pre_tokenizer");
    impl->pre_tokenizer =
        PreTokenizer::from_json(pre == nullptr ? json() : *pre, source + ": pre_tokenizer");
    if (!impl->pre_tokenizer.has_byte_level()) {
      fail("{}: pre_tokenizer: no ByteLevel step, so this is not a byte-level BPE tokenizer",
           source);
    }
    impl->added_tokens = parse_added_tokens(root, *impl->model, source);
    build_id_tables(*impl);
    std::vector<AddedToken> raw;
    std::vector<AddedToken> normalized;
    for (const AddedToken& token : impl->added_tokens) {
      (token.normalized ? normalized : raw).push_back(token);
    }
    impl->raw_matcher = AddedTokenMatcher(std::move(raw));
    impl->normalized_matcher = AddedTokenMatcher(std::move(normalized));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: malformed tokenizer.json: {}", source, e.what());
  }
  return BpeTokenizer(std::move(impl));
}

}  // namespace minimax
