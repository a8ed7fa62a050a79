// Every row of the op table (op_table.cc) on every backend configuration (backend_configs.cc)
// against the reference backend: float outputs within the row's normalised squared error (or
// bit-identical where it is 0), NaN where the reference has NaN and nowhere else, integer outputs
// equal. One test per row; the configurations run inside it, each failure naming its own.
//
//   test_backend_ops [--backend PREFIX] [--show-error] [gtest flags]
//
// --backend runs the configurations whose name starts with PREFIX ("cpu/avx2", "cuda"), and fails
// when none matches; --show-error prints each configuration's measured error (how the tolerances
// were chosen). The suites: Tiny/ (every run), RealLayerShapes/ (not under the sanitizers) and
// Slow/ (CTest label "slow").
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>

#include "backend_configs.h"
#include "base/error.h"
#include "op_inputs.h"

namespace minimax {
namespace {

std::vector<BackendConfig>& selected_configs() {
  static std::vector<BackendConfig> configs;
  return configs;
}
bool show_error = false;

// Σ(got − ref)² / Σ ref² over the finite reference values (0 when both are all zero); NaN when
// the NaNs are not in the same places or a value is not finite where the reference is.
double normalised_squared_error(const std::vector<float>& ref, const std::vector<float>& got) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(ref[i]) != std::isnan(got[i])) return NAN;
    if (std::isnan(ref[i])) continue;
    if (std::isinf(ref[i]) || std::isinf(got[i])) {
      if (ref[i] != got[i]) return NAN;
      continue;
    }
    const double d = double(got[i]) - ref[i];
    err += d * d;
    norm += double(ref[i]) * ref[i];
  }
  if (err == 0) return 0;
  return norm > 0 ? err / norm : INFINITY;
}

// The first index where the bits differ, or -1.
int64_t first_bit_difference(const std::vector<float>& ref, const std::vector<float>& got) {
  for (size_t i = 0; i < ref.size(); ++i)
    if (std::memcmp(&ref[i], &got[i], sizeof(float)) != 0) return static_cast<int64_t>(i);
  return -1;
}

void expect_matches(const OpCase& c, const BackendConfig& config, const OpOutputs& want,
                    const OpOutputs& got) {
  ASSERT_EQ(got.values.size(), want.values.size());
  ASSERT_EQ(got.ids.size(), want.ids.size());
  for (size_t i = 0; i < want.ids.size(); ++i)
    ASSERT_EQ(got.ids[i], want.ids[i]) << "id output " << i;
  if (want.values.empty()) return;
  const double limit = tolerance(c, config.reduced_activations);
  const double nmse = normalised_squared_error(want.values, got.values);
  if (show_error) std::printf("  %-24s nmse %.3g (limit %.3g)\n", config.name.c_str(), nmse, limit);
  if (limit == 0) {
    const int64_t i = first_bit_difference(want.values, got.values);
    EXPECT_EQ(i, -1) << "must be bit-identical; output " << i << ": " << got.values[i]
                     << ", reference " << want.values[i];
  } else {
    EXPECT_LE(nmse, limit) << "normalised squared error against the reference";
  }
}

class BackendOps : public testing::TestWithParam<OpCase> {};
}  // namespace

// What gtest prints for a failing row: its name, not its bytes.
void PrintTo(const OpCase& c, std::ostream* os) { *os << case_name(c); }

namespace {

TEST_P(BackendOps, MatchesTheReference) {
  const OpCase& c = GetParam();
  const std::unique_ptr<OpInputs> inputs = make_op_inputs(c);
  ThreadPool pool(2);
  const auto reference = create_backend(BackendKind::kReference);
  const OpOutputs want = inputs->run(*reference, &pool);
  for (const BackendConfig& config : selected_configs()) {
    SCOPED_TRACE("backend " + config.name);
    const auto backend = create_backend(config.kind, config.options);
    expect_matches(c, config, want, inputs->run(*backend, &pool));
  }
}

std::vector<OpCase> cases_of(CaseSize size) {
  std::vector<OpCase> out;
  for (const OpCase& c : op_table())
    if (c.size == size) out.push_back(c);
  return out;
}

std::string test_name(const testing::TestParamInfo<OpCase>& info) { return case_name(info.param); }

INSTANTIATE_TEST_SUITE_P(Tiny, BackendOps, testing::ValuesIn(cases_of(CaseSize::kTiny)), test_name);
INSTANTIATE_TEST_SUITE_P(RealLayerShapes, BackendOps, testing::ValuesIn(cases_of(CaseSize::kReal)),
                         test_name);
INSTANTIATE_TEST_SUITE_P(Slow, BackendOps, testing::ValuesIn(cases_of(CaseSize::kFull)), test_name);

TEST(OpTable, EveryOpHasACaseOfEachRun) {
  for (int op = 0; op <= static_cast<int>(Op::kMoe); ++op) {
    bool tiny = false, real = false;
    for (const OpCase& c : op_table()) {
      if (c.op != static_cast<Op>(op)) continue;
      tiny |= c.size == CaseSize::kTiny;
      real |= c.size != CaseSize::kTiny || c.op == Op::kCopy || c.op == Op::kQuantizeActivations;
    }
    EXPECT_TRUE(tiny && real) << op_name(static_cast<Op>(op));
  }
}

// The harness itself: a backend whose op is off by a little must fail the row.
const OpCase& first_case_of(Op op) {
  for (const OpCase& c : op_table())
    if (c.op == op && c.size == CaseSize::kTiny) return c;
  throw Error("no tiny case of " + std::string(op_name(op)));
}

void expect_rejected(const OpCase& c, const KernelOps& ops, const char* message) {
  const std::unique_ptr<OpInputs> inputs = make_op_inputs(c);
  const OpOutputs want = inputs->run(*create_backend(BackendKind::kReference), nullptr);
  const OpOutputs got = inputs->run(*create_host_backend(ops), nullptr);
  BackendConfig config;
  config.name = "planted";
  EXPECT_NONFATAL_FAILURE(expect_matches(c, config, want, got), message);
}

TEST(OpTable, ALinearOneElementOffByOnePercentFails) {
  KernelOps ops = reference_ops();
  ops.linear = [](const WeightView& w, const float* x, int64_t T, float* y, ThreadPool* pool) {
    reference_ops().linear(w, x, T, y, pool);
    y[T * w.rows - 1] *= 1.01f;
  };
  expect_rejected(first_case_of(Op::kLinear), ops, "normalised squared error");
}

TEST(OpTable, ARopeOneUlpOffFails) {
  KernelOps ops = reference_ops();
  ops.rope = [](float* x, int64_t T, const int32_t* positions, const RopeParams& p,
                ThreadPool* pool) {
    reference_ops().rope(x, T, positions, p, pool);
    x[1] = std::nextafter(x[1], INFINITY);
  };
  expect_rejected(first_case_of(Op::kRope), ops, "bit-identical");
}

}  // namespace
}  // namespace minimax

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::string prefix;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--show-error") {
      minimax::show_error = true;
    } else if (arg == "--backend" && i + 1 < argc) {
      prefix = argv[++i];
    } else if (arg.rfind("--backend=", 0) == 0) {
      prefix = arg.substr(10);
    } else {
      std::fprintf(stderr, "test_backend_ops: unknown argument %s\n", arg.c_str());
      return 2;
    }
  }
  minimax::selected_configs() = minimax::backend_configs_matching(prefix);
  if (minimax::selected_configs().empty()) {
    std::fprintf(stderr,
                 "test_backend_ops: no backend configuration starts with \"%s\"; there are:\n",
                 prefix.c_str());
    for (const auto& c : minimax::backend_configs()) std::fprintf(stderr, "  %s\n", c.name.c_str());
    return 2;
  }
  return RUN_ALL_TESTS();
}
