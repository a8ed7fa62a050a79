#include "cli/model_path_check.h"

#include <cctype>
#include <filesystem>

#include "base/error.h"

namespace minimax::cli {
namespace {

bool is_id_part(std::string_view part) {
  if (part.empty() || part.front() == '.') return false;
  for (char c : part) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool has_gguf_extension(const std::filesystem::path& path) {
  std::string extension = path.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".gguf";
}

constexpr std::string_view kGgufAdvice =
    "GGUF files are not supported; use the Hugging Face safetensors checkpoint (the directory "
    "with config.json and *.safetensors)";

}  // namespace

bool looks_like_hugging_face_id(std::string_view text) {
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  return is_id_part(text.substr(0, slash)) && is_id_part(text.substr(slash + 1));
}

void check_model_path(const std::string& path, std::string_view flag) {
  namespace fs = std::filesystem;
  if (path.empty())
    fail("{}: no model given; pass the checkpoint directory as the first argument or as {} DIR",
         flag, flag);
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (fs::is_directory(status)) {
    if (!fs::exists(fs::path(path) / "config.json", error))
      fail(
          "{} {}: not a checkpoint directory: no config.json (a Hugging Face checkpoint "
          "directory holds config.json, tokenizer.json and *.safetensors)",
          flag, path);
    return;
  }
  if (fs::exists(status)) {
    if (has_gguf_extension(path)) fail("{} {}: {}", flag, path, kGgufAdvice);
    fail(
        "{} {}: is a file, not a checkpoint directory (give the directory that holds "
        "config.json)",
        flag, path);
  }
  if (has_gguf_extension(path)) fail("{} {}: no such file, and {}", flag, path, kGgufAdvice);
  if (looks_like_hugging_face_id(path))
    fail(
        "{} {}: no such directory; it looks like a Hugging Face id; download it first with "
        "`huggingface-cli download {} --local-dir DIR` and pass DIR",
        flag, path, path);
  fail("{} {}: no such directory", flag, path);
}

}  // namespace minimax::cli
