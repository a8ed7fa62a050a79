// Module-name matching as each quantization format's loader does it: exact names, fnmatch globs and
// "re:" regular expressions (spec/formats.md §2.1, §4.1, §5; HF fine-grained FP8).
#pragma once

#include <string>
#include <string_view>

namespace minimax {

// Python fnmatch.fnmatchcase: the whole name must match; `*` matches any run (dots included), `?`
// one character, `[abc]` / `[a-z]` / `[!abc]` a set (a `]` right after `[` or `[!` is a member; a
// `[` with no closing `]` is a literal).
bool glob_match(std::string_view pattern, std::string_view name);
bool has_glob_chars(std::string_view pattern);

// Python re.match: anchored at the start of `name` only, not at its end. std::regex ECMAScript
// syntax, which agrees with Python's for the patterns these configs use. Compiled patterns are
// cached per thread. Throws Error naming the pattern if it does not compile.
bool regex_match_start(const std::string& pattern, const std::string& name);

// One ignore/exclude entry against one module name (e.g. "model.layers.0.self_attn.q_proj"):

// Official MiniMax FP8 `modules_to_not_convert` (transformers' should_convert_module): the entry is
// a regex matched at the start of the name, or the name ends with the entry ("gate" reaches
// "model.layers.3.block_sparse_moe.gate", not "...mlp.gate_proj").
bool matches_modules_to_not_convert(const std::string& entry, const std::string& name);
// compressed-tensors `ignore` / `targets`: "re:<regex>" via re.match, otherwise the exact module
// name. (Class names such as "Linear" are handled by the caller.)
bool matches_compressed_tensors(const std::string& entry, const std::string& name);
// AMD Quark `exclude`: exact, "re:<regex>" via re.match (vLLM), or an fnmatch glob (Quark's own
// exports and recipes write globs such as "*self_attn*").
bool matches_quark(const std::string& entry, const std::string& name);
// ModelOpt `ignore` / `exclude_modules` (vLLM): a trailing "path*" (not ".*") stands for "path" and
// "path.*", so "model.layers.1*" does not reach layer 10; then exact, substring, fnmatch.
bool matches_modelopt(const std::string& entry, const std::string& name);

}  // namespace minimax
