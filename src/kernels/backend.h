// Run-time choice of the kernel backend. The reference backend is always complete; the cpu
// (SIMD) backend provides the ops it has and takes the reference op for every entry it leaves
// null, so the model can always call every op of the table it is given.
#pragma once

#include <string>
#include <string_view>

#include "kernels/ops.h"

namespace minimax {

enum class BackendKind : uint8_t { kReference, kCpu };

std::string_view backend_name(BackendKind kind);  // "reference" / "cpu"
// "reference" or "cpu"; Error naming `what` (e.g. "--backend") otherwise.
BackendKind parse_backend_kind(std::string_view text, std::string_view what);

// The plain, obviously-correct ops of kernels/reference/.
const KernelOps& reference_ops();

// The complete table of `kind`: for kCpu, the SIMD backend's ops with every null entry replaced by
// the reference op. Built once; the reference is what kCpu gives when no SIMD op exists yet.
const KernelOps& kernel_ops(BackendKind kind);

// `partial` with its null entries filled from the reference (name kept). Exposed for tests.
KernelOps complete_with_reference(const KernelOps& partial);

// Registration point of the SIMD backend: src/kernels/cpu/cpu_backend.h declares
//   namespace minimax { KernelOps cpu_kernel_ops(); }
// (defined in src/kernels/cpu/*.cc), returning the ops it implements, others null. backend.cc
// includes that header when it exists (__has_include), so the tree builds before and after the
// cpu backend lands. A build directory configured before the header appeared must recompile
// backend.cc once (the compiler's dependency list cannot name a file that did not exist).
bool cpu_backend_available();  // whether the SIMD table was compiled in

}  // namespace minimax
