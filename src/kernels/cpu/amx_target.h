// The target of an AMX kernel file: MINIMAX_AVX512_BASE_TARGET (its vector ISA) plus AMX-TILE and
// AMX-BF16, or without them where the file is compiled against the tile emulator
// (MINIMAX_AMX_EMULATED, amx_emulation-inl.h). MINIMAX_AMX_TILES names the namespace its exported
// functions go in, so that both builds of a file link into one program (linear_internal.h).
// Included first by those files, before anything that reads MINIMAX_AVX512_TARGET.
#pragma once

#ifndef MINIMAX_AVX512_BASE_TARGET
#error "define MINIMAX_AVX512_BASE_TARGET before including amx_target.h"
#endif
#ifdef MINIMAX_AMX_EMULATED
#define MINIMAX_AVX512_TARGET MINIMAX_AVX512_BASE_TARGET
#define MINIMAX_AMX_TILES amx_emulated
#else
#define MINIMAX_AVX512_TARGET MINIMAX_AVX512_BASE_TARGET ",amx-tile,amx-bf16"
#define MINIMAX_AMX_TILES amx_hardware
#endif
