// --backend and --cpu-moe (cli/backend_flag.h): the names come from the backend table, a backend
// this build lacks is named as such, and --cpu-moe is refused without a device backend.
#include "cli/backend_flag.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace minimax::cli {
namespace {

std::string error_of(const std::string& backend, bool cpu_moe) {
  try {
    resolve_backend(backend, cpu_moe);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(BackendFlag, NamesTheRegisteredBackends) {
  EXPECT_EQ(resolve_backend("cpu", false), BackendKind::kCpu);
  EXPECT_EQ(resolve_backend("reference", false), BackendKind::kReference);
  EXPECT_NE(error_of("gpu", false).find("unknown kernel backend 'gpu'"), std::string::npos);
#ifdef MINIMAX_HAVE_CUDA
  EXPECT_EQ(resolve_backend("cuda", true), BackendKind::kCuda);
#else
  EXPECT_NE(error_of("cuda", false).find("not built into this binary"), std::string::npos);
#endif
}

TEST(BackendFlag, CpuMoeNeedsADeviceBackend) {
  for (const char* host : {"cpu", "reference"}) {
    const std::string e = error_of(host, true);
    EXPECT_NE(e.find("--cpu-moe: only with --backend cuda"), std::string::npos) << e;
  }
}

TEST(BackendFlag, TheHelpListsWhatThisBuildHas) {
  CLI::App app;
  std::string backend = "cpu";
  bool cpu_moe = false;
  add_backend_flags(&app, backend, cpu_moe);
  app.parse(std::vector<std::string>{"reference", "--backend", "--cpu-moe"});  // reversed order
  EXPECT_EQ(backend, "reference");
  EXPECT_TRUE(cpu_moe);
  const std::string help = app.help();
  for (const BackendEntry& e : registered_backends())
    EXPECT_NE(help.find(std::string(e.name)), std::string::npos) << e.name;
}

}  // namespace
}  // namespace minimax::cli
