// The committed corpus of malformed safetensors files: each must fail with exactly the message in
// expected_errors.json (after the "<path>: " prefix), and every message must name the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/atomic_output.h"
#include "base/error.h"
#include "formats/safetensors.h"

namespace minimax {
namespace {

const std::string kCorpus = std::string(MINIMAX_TEST_DATA) + "/safetensors_bad";

TEST(SafetensorsCorpus, EveryFileFailsWithItsExactMessage) {
  auto expected = nlohmann::json::parse(read_file(kCorpus + "/expected_errors.json"));
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
    if (entry.path().extension() != ".safetensors") continue;
    ++files;
    const std::string name = entry.path().filename().string();
    ASSERT_TRUE(expected.contains(name)) << name << " has no expected message";
    try {
      SafetensorsFile file(entry.path().string());
      ADD_FAILURE() << name << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                entry.path().string() + ": " + expected[name].get<std::string>())
          << name;
    }
  }
  EXPECT_EQ(files, expected.size());
  EXPECT_GE(files, 20u);
}

}  // namespace
}  // namespace minimax
