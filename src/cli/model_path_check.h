// What a --model path is, checked before anything is loaded. Without it a missing directory, a
// directory that is not a checkpoint, a Hugging Face id or a GGUF file all failed deep in the load
// as ".../tokenizer.json: cannot open tokenizer file" (issue 39), which names the wrong thing.
#pragma once

#include <string>
#include <string_view>

namespace minimax::cli {

// Error, starting with `flag` and the path, unless `path` is a directory holding config.json. The
// message says what the path is instead: missing, a file (GGUF files named as such), a directory
// without config.json, or a Hugging Face id (owner/name, not present here) with the command that
// downloads it. An empty path is an Error saying how to give one.
void check_model_path(const std::string& path, std::string_view flag = "--model");

// Whether `text` has the shape of a Hugging Face repository id: owner/name, each part of letters,
// digits, '-', '_' and '.', neither part starting with '.'.
bool looks_like_hugging_face_id(std::string_view text);

}  // namespace minimax::cli
