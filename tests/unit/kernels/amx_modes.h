// The two ways the AMX kernels run (kernels/cpu/cpu_features.h): on this CPU's own kernels (its
// AMX tiles where it has them), and on the tile emulator (amx_emulation-inl.h), which runs the
// AMX kernels' own code on CPUs without AMX. Tests parameterized on the mode run the same checks
// against the reference both ways, so the AMX paths are checked on every CPU with AVX512_BF16.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "kernels/cpu/cpu_features.h"

namespace minimax {

enum class AmxMode { kCpu, kEmulated };

inline std::string amx_mode_name(const ::testing::TestParamInfo<AmxMode>& info) {
  return info.param == AmxMode::kCpu ? "Cpu" : "EmulatedAmx";
}

// Why the AMX kernels cannot run in mode m here (kCpu: only on a CPU with AMX), or "".
inline std::string amx_kernels_unavailable(AmxMode m) {
  if (!cpu_features().avx512_bf16)
    return "no AVX512_BF16: the AMX kernels do not run, emulated or not";
  if (m == AmxMode::kCpu && !cpu_features().amx_bf16)
    return "no AMX here (the EmulatedAmx case runs them)";
  return "";
}

// The emulation on for the scope's lifetime in kEmulated (off in kCpu), then as it was.
class ScopedAmxMode {
 public:
  explicit ScopedAmxMode(AmxMode m) : was_(amx_emulation()) {
    set_amx_emulation(m == AmxMode::kEmulated);
  }
  ~ScopedAmxMode() { set_amx_emulation(was_); }
  ScopedAmxMode(const ScopedAmxMode&) = delete;
  ScopedAmxMode& operator=(const ScopedAmxMode&) = delete;

 private:
  bool was_;
};

// A fixture whose tests run in the mode of their parameter: skipped where unavailable() says why
// (by default amx_kernels_unavailable), else the mode held for the test.
class AmxModeTest : public ::testing::TestWithParam<AmxMode> {
 protected:
  void SetUp() override {
    if (const std::string why = unavailable(); !why.empty()) GTEST_SKIP() << why;
    mode_.emplace(GetParam());
  }
  void TearDown() override { mode_.reset(); }
  virtual std::string unavailable() const { return amx_kernels_unavailable(GetParam()); }

 private:
  std::optional<ScopedAmxMode> mode_;
};

}  // namespace minimax
