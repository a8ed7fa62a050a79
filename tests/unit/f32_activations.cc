// Linked into the test binaries that run the model (tests/CMakeLists.txt): their tests run with f32
// activations whatever MINIMAX_CPU_ACTIVATIONS or a default says, so that the tight tolerances
// they state (2e-4 against the float64 goldens, bit-equal paths, cpu against reference) keep
// meaning f32 and a change of the default cannot loosen them silently. A test of another precision
// sets it and puts f32 back (tests/unit/model/activation_precision_model_test.cc).
#include <gtest/gtest.h>

#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

class F32Activations : public ::testing::Environment {
 public:
  void SetUp() override { set_engine_activation_precision(ActivationPrecision::kF32); }
};
[[maybe_unused]] ::testing::Environment* const kF32Activations =
    ::testing::AddGlobalTestEnvironment(new F32Activations);

}  // namespace
}  // namespace minimax
