// The validator's own decoders (lookup tables computed here from the bit layouts), independent of
// formats/float_formats.h and of the converter's encoders: MXFP4 elements, OCP e4m3fn codes, bf16
// and the f32 row scales.
#pragma once

#include <array>
#include <cstdint>

namespace minimax::validation {

// Value of each e2m1 nibble (0x8 is -0.0).
const std::array<double, 16>& e2m1_values();
// Value of each OCP e4m3fn code; NaN for 0x7F and 0xFF.
const std::array<double, 256>& e4m3fn_values();

// MXFP4 elements are e2m1 values times their block's e8m0 scale; a 0xFF scale gives NaN.
// A whole row of `cols` elements (cols % 32 == 0) into out[0, cols).
void decode_mxfp4_row(const uint8_t* packed, const uint8_t* scales, int64_t cols, double* out);
double bf16_value(uint16_t bits);

// A positive finite normal f32 that is exactly 2^S; false otherwise (S untouched).
bool f32_power_of_two(uint32_t bits, int* exponent);

// floor(log2|q|) of a nonzero e4m3fn code (normals and subnormals).
int e4m3fn_exponent(uint8_t code);

}  // namespace minimax::validation
