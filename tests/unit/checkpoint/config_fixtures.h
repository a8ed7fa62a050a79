// The published configurations the checkpoint tests read (tests/data/configs/<name>/config.json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/model_config.h"

namespace minimax {

inline std::string fixture_dir(const std::string& name) {
  return std::string(MINIMAX_TEST_DATA) + "/configs/" + name;
}

inline nlohmann::json fixture(const std::string& name) {
  return read_json_file(fixture_dir(name) + "/config.json");
}

}  // namespace minimax
