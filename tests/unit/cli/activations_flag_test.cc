// --activations (cli/activations_flag.h): each value's precision, auto, the environment variable
// when the flag is absent, and every bad value refused naming the flag or the variable.
#include "cli/activations_flag.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_features.h"

namespace minimax::cli {
namespace {

// Parses `run ARGS...` on a command with the flag; returns the flag's value.
std::string parse(std::vector<std::string> args) {
  CLI::App app{"test"};
  CLI::App* run = app.add_subcommand("run");
  std::string value = "(unset)";
  add_activations_flag(run, value);
  args.insert(args.begin(), "run");
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  app.parse(args);
  return value;
}

std::string parse_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string activation_error_of(const std::string& value, const char* environment) {
  try {
    activation_precision_for(value, environment);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ActivationsFlag, EachValueNamesItsPrecision) {
  EXPECT_EQ(activation_precision_for(parse({"--activations", "f32"}), nullptr),
            ActivationPrecision::kF32);
  EXPECT_EQ(activation_precision_for(parse({"--activations", "bf16x2"}), nullptr),
            ActivationPrecision::kBF16x2);
  // The same names as the environment variable: bf16 is every call, bf16-batches the GEMM only.
  EXPECT_EQ(activation_precision_for(parse({"--activations=bf16"}), nullptr),
            ActivationPrecision::kBF16);
  EXPECT_EQ(activation_precision_for(parse({"--activations", "bf16-batches"}), nullptr),
            ActivationPrecision::kBF16Batches);
  EXPECT_EQ(activation_precision_for(parse({"--activations", "bf16x2-batches"}), nullptr),
            ActivationPrecision::kBF16x2Batches);
  EXPECT_EQ(activation_precision_for(parse({"--activations", "auto"}), nullptr),
            auto_activation_precision());
}

TEST(ActivationsFlag, AutoIsBf16x2WhereTheKernelsHaveAvx512Bf16AndOneModeForEveryCallSize) {
  const bool bf16_kernels = cpu_features().avx512_bf16 && default_cpu_isa() == CpuIsa::kAvx512;
  EXPECT_EQ(auto_activation_precision(),
            bf16_kernels ? ActivationPrecision::kBF16x2 : ActivationPrecision::kF32);
  EXPECT_EQ(auto_activation_precision(CpuIsa::kAvx2), ActivationPrecision::kF32);
}

TEST(ActivationsFlag, AbsentFlagDefersToTheEnvironmentThenAuto) {
  EXPECT_EQ(parse({}), "");
  EXPECT_EQ(activation_precision_for("", nullptr), auto_activation_precision());
  EXPECT_EQ(activation_precision_for("", ""), auto_activation_precision());
  // The variable's names are the flag's (kernels/cpu/linear.h).
  EXPECT_EQ(activation_precision_for("", "bf16-batches"), ActivationPrecision::kBF16Batches);
  EXPECT_EQ(activation_precision_for("", "bf16"), ActivationPrecision::kBF16);
  EXPECT_EQ(activation_precision_for("", "f32"), ActivationPrecision::kF32);
  // The flag wins over the variable, a bad variable included.
  EXPECT_EQ(activation_precision_for("f32", "bf16-batches"), ActivationPrecision::kF32);
  EXPECT_EQ(activation_precision_for("bf16x2", "nonsense"), ActivationPrecision::kBF16x2);
}

TEST(ActivationsFlag, BadValuesNameTheFlagOrTheVariable) {
  const std::string parsed = parse_error({"--activations", "fp16"});
  EXPECT_NE(parsed.find("--activations"), std::string::npos) << parsed;
  EXPECT_NE(parsed.find("fp16"), std::string::npos) << parsed;
  const std::string direct = activation_error_of("fp16", nullptr);
  EXPECT_NE(direct.find("--activations"), std::string::npos) << direct;
  const std::string env = activation_error_of("", "fp16");
  EXPECT_NE(env.find("MINIMAX_CPU_ACTIVATIONS"), std::string::npos) << env;
  EXPECT_NE(env.find("fp16"), std::string::npos) << env;
}

TEST(ActivationsFlag, TheConfigurationTakesTheFlagAndTheEnvironment) {
  CpuEnvironment env;
  CpuKernelConfig c = cpu_kernel_config("bf16", false, env);
  EXPECT_EQ(c.activations, ActivationPrecision::kBF16);
  EXPECT_EQ(c.isa, default_cpu_isa());
  EXPECT_EQ(c.amx, cpu_features().amx_bf16);
  env.activations = "bf16-batches";
  EXPECT_EQ(cpu_kernel_config("", false, env).activations, ActivationPrecision::kBF16Batches);
  EXPECT_EQ(cpu_kernel_config("f32", false, env).activations, ActivationPrecision::kF32);
  // MINIMAX_CPU_ISA caps the level, and `auto` follows it: f32 below AVX-512.
  env = {};
  env.isa = "scalar";
  c = cpu_kernel_config("auto", false, env);
  EXPECT_EQ(c.isa, CpuIsa::kScalar);
  EXPECT_EQ(c.activations, ActivationPrecision::kF32);
  env.amx = "0";
  EXPECT_FALSE(cpu_kernel_config("", false, env).amx);
}

// Batch invariance from --batch-invariant or MINIMAX_CPU_BATCH_INVARIANT=1; refused with the
// *-batches precisions, naming the flag or the variable that asked for it.
TEST(ActivationsFlag, BatchInvarianceFromTheFlagOrTheEnvironment) {
  CpuEnvironment env;
  EXPECT_FALSE(cpu_kernel_config("bf16x2", false, env).batch_invariant);
  EXPECT_TRUE(cpu_kernel_config("bf16x2", true, env).batch_invariant);
  EXPECT_TRUE(cpu_kernel_config("bf16x2", true, env).linear().batch_invariant);
  env.batch_invariant = "1";
  EXPECT_TRUE(cpu_kernel_config("f32", false, env).batch_invariant);
  env.batch_invariant = "0";
  EXPECT_FALSE(cpu_kernel_config("f32", false, env).batch_invariant);
  auto error = [](const std::string& flag, bool invariant, const CpuEnvironment& e) {
    try {
      cpu_kernel_config(flag, invariant, e);
    } catch (const std::exception& x) {
      return std::string(x.what());
    }
    return std::string("(no error)");
  };
  env = {};
  const std::string by_flag = error("bf16x2-batches", true, env);
  EXPECT_NE(by_flag.find("--batch-invariant"), std::string::npos) << by_flag;
  EXPECT_NE(by_flag.find("bf16x2-batches"), std::string::npos) << by_flag;
  env.batch_invariant = "1";
  const std::string by_env = error("bf16-batches", false, env);
  EXPECT_NE(by_env.find("MINIMAX_CPU_BATCH_INVARIANT"), std::string::npos) << by_env;
  env.batch_invariant = "yes";
  EXPECT_NE(error("f32", false, env).find("MINIMAX_CPU_BATCH_INVARIANT"), std::string::npos);
}

std::string config_error(const CpuEnvironment& env) {
  try {
    cpu_kernel_config("", false, env);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ActivationsFlag, BadEnvironmentValuesNameTheVariable) {
  CpuEnvironment env;
  env.isa = "sse9";
  EXPECT_NE(config_error(env).find("MINIMAX_CPU_ISA"), std::string::npos) << config_error(env);
  env = {};
  env.amx = "yes";
  EXPECT_NE(config_error(env).find("MINIMAX_CPU_AMX"), std::string::npos) << config_error(env);
  env = {};
  env.activations = "fp16";
  EXPECT_NE(config_error(env).find("MINIMAX_CPU_ACTIVATIONS"), std::string::npos);
  if (!cpu_supports(CpuIsa::kAvx512)) {
    env = {};
    env.isa = "avx512";
    EXPECT_NE(config_error(env).find("does not support"), std::string::npos);
  }
}

// MINIMAX_CPU_AMX=emulate runs the AMX kernels on the tile emulator (where AVX512_BF16 is), or
// fails naming what the CPU lacks.
TEST(ActivationsFlag, AmxEmulationFromTheEnvironment) {
  CpuEnvironment env;
  env.amx = "emulate";
  if (!cpu_features().avx512_bf16) {
    EXPECT_NE(config_error(env).find("AVX512_BF16"), std::string::npos) << config_error(env);
    return;
  }
  const CpuKernelConfig c = cpu_kernel_config("bf16x2", false, env);
  EXPECT_TRUE(amx_emulation());
  EXPECT_TRUE(c.amx);
  EXPECT_TRUE(c.amx_attention());
  set_amx_emulation(false);
}

}  // namespace
}  // namespace minimax::cli
