// TensorStore: the shards of one checkpoint directory behind one map.
#include "formats/tensor_store.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/atomic_output.h"
#include "base/error.h"

namespace minimax {

namespace fs = std::filesystem;

TensorStore::TensorStore(const std::string& dir) : dir_(dir) {
  const fs::path index_path = fs::path(dir) / "model.safetensors.index.json";
  const fs::path single_path = fs::path(dir) / "model.safetensors";
  if (!fs::is_directory(dir)) fail("{}: not a directory", dir);

  if (!fs::exists(index_path)) {
    if (!fs::exists(single_path)) {
      fail("{}: no model.safetensors.index.json and no model.safetensors", dir);
    }
    shard_names_.push_back("model.safetensors");
    shards_.push_back(std::make_unique<SafetensorsFile>(single_path.string()));
    for (const TensorInfo& info : shards_[0]->tensors()) {
      refs_[info.name] = TensorRef{shards_[0].get(), &info};
    }
    return;
  }

  sharded_ = true;
  const std::string index_name = index_path.string();
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(read_file(index_name));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", index_name, e.what());
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    fail("{}: missing object field 'weight_map'", index_name);
  }
  std::map<std::string, size_t> shard_of_file;
  std::map<std::string, std::string> expected;  // tensor → shard file
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
    if (!it.value().is_string()) {
      fail("{}: weight_map entry '{}' is not a string", index_name, it.key());
    }
    const std::string file = it.value().get<std::string>();
    if (file.empty() || file.find('/') != std::string::npos || file == "..") {
      fail("{}: weight_map entry '{}' names an invalid shard file '{}'", index_name, it.key(),
           file);
    }
    expected[it.key()] = file;
    if (!shard_of_file.count(file)) {
      shard_of_file[file] = shard_names_.size();
      shard_names_.push_back(file);
    }
  }
  for (const std::string& name : shard_names_) {
    const fs::path p = fs::path(dir) / name;
    if (!fs::exists(p)) fail("{}: shard '{}' listed in the index does not exist", index_name, name);
    shards_.push_back(std::make_unique<SafetensorsFile>(p.string()));
  }
  for (size_t s = 0; s < shards_.size(); ++s) {
    for (const TensorInfo& info : shards_[s]->tensors()) {
      auto e = expected.find(info.name);
      if (e == expected.end()) {
        fail("{}: tensor '{}' is not listed in {}", shards_[s]->path(), info.name, index_name);
      }
      if (e->second != shard_names_[s]) {
        fail("{}: tensor '{}' is in {} but the index maps it to {}", index_name, info.name,
             shard_names_[s], e->second);
      }
      refs_[info.name] = TensorRef{shards_[s].get(), &info};
    }
  }
  for (const auto& [name, file] : expected) {
    if (!refs_.count(name))
      fail("{}: tensor '{}' is mapped to {} but not there", index_name, name, file);
  }
}

std::vector<std::string> TensorStore::names() const {
  std::vector<std::string> out;
  out.reserve(refs_.size());
  for (const auto& [name, ref] : refs_) out.push_back(name);
  return out;
}

TensorRef TensorStore::find(const std::string& name) const {
  auto it = refs_.find(name);
  return it == refs_.end() ? TensorRef{} : it->second;
}

TensorRef TensorStore::at(const std::string& name) const {
  TensorRef ref = find(name);
  if (!ref) fail("{}: tensor '{}' not found in the checkpoint", dir_, name);
  return ref;
}

uint64_t TensorStore::total_bytes() const {
  uint64_t total = 0;
  for (const auto& [name, ref] : refs_) total += ref.info->nbytes();
  return total;
}

}  // namespace minimax
