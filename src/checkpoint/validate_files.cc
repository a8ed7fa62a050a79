// check_checkpoint_files: every file of the converted directory is accounted for, and the side
// files of the source are there unchanged. The tensors inside the shards are accounted for by
// CheckedCheckpoint (each listed by the index, in the shard it names).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "checkpoint/validate.h"
#include "checkpoint/validate_reader.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

std::string slurp_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The files the converter writes itself rather than copies from the source.
bool written_by_converter(const std::string& name) {
  return name == "config.json" || name == "model.safetensors.index.json";
}

}  // namespace

void check_checkpoint_files(const std::string& source_dir, const CheckedCheckpoint& converted,
                            ValidateReport& report) {
  const fs::path converted_dir = converted.dir();
  for (const auto& entry : fs::directory_iterator(source_dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() == ".safetensors" ||
        written_by_converter(name))
      continue;
    const fs::path copy = converted_dir / name;
    if (!fs::is_regular_file(copy))
      report.fail(fmt::format("{}: side file missing from the converted checkpoint", name));
    else if (slurp_file(entry.path()) != slurp_file(copy))
      report.fail(fmt::format("{}: side file differs from the source's", name));
    else
      ++report.side_files;
  }
  // The other way round: a file the index does not list, or that the source does not have, was
  // not written by the converter (a shard of another model, a stray note), and a loader that
  // globs *.safetensors or copies the directory would take it along.
  for (const auto& entry : fs::directory_iterator(converted_dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file()) {
      report.fail(fmt::format("{}: not a regular file; a converted checkpoint holds only files",
                              entry.path().string()));
    } else if (entry.path().extension() == ".safetensors") {
      if (!converted.shard_files().count(name))
        report.fail(
            fmt::format("{}: a .safetensors file that the checkpoint does not account for ({})",
                        entry.path().string(),
                        fs::exists(converted_dir / "model.safetensors.index.json")
                            ? "model.safetensors.index.json does not list it"
                            : "a checkpoint without an index is model.safetensors alone"));
    } else if (!written_by_converter(name) && !fs::is_regular_file(fs::path(source_dir) / name)) {
      report.fail(fmt::format("{}: not a file of the source, nor one the converter writes",
                              entry.path().string()));
    }
  }
}

}  // namespace minimax
