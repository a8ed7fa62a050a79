// GCC 12's AVX-512 intrinsics fill their unused pass-through operand from a self-initialized
// variable (_mm512_undefined_*), which its own uninitialized-use warnings then report once the
// intrinsic is inlined into our code (GCC bug 105593, fixed in GCC 13). Included by the kernel
// sources that use AVX-512 intrinsics (file by file: src/kernels/ is not a unity build, so the
// pragmas stay within the file that asks for them).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
