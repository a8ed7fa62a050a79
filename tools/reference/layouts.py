"""Decoding of every stored weight layout to float64, written from spec/formats.md and
docs/checkpoint.md: BF16, F16, F32, official block FP8 (weight_scale_inv per 128x128 tile, a
multiplier), official MXFP8 (e4m3 codes, U8 e8m0 weight_scale_inv per 32 inputs), compressed-tensors
channel FP8 (weight_scale [out, 1]), Quark FP8 (weight_scale [out] per channel or [] per tensor),
Quark MXFP4 (e2m1 pairs, low nibble first, e8m0 scale per 32) and ModelOpt NVFP4 (e2m1, e4m3
scale per 16, f32 weight_scale_2)."""

import numpy as np
import torch


def bf16_bits_to_f64(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def e4m3fn_table():
    """Value of every OCP e4m3fn code: bias 7, 3 mantissa bits, no inf, S.1111.111 is NaN."""
    table = np.zeros(256, dtype=np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exponent = (code >> 3) & 0xF
        mantissa = code & 0x7
        if exponent == 0xF and mantissa == 0x7:
            table[code] = np.nan
        elif exponent == 0:
            table[code] = sign * (mantissa / 8.0) * 2.0 ** -6
        else:
            table[code] = sign * (1.0 + mantissa / 8.0) * 2.0 ** (exponent - 7)
    return table


E4M3 = e4m3fn_table()
# e2m1 nibble -> value: bit 3 sign, then magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6.
E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0.0, -.5, -1, -1.5, -2, -3, -4, -6], dtype=np.float64)


def plain_to_f64(t):
    if t.dtype == "BF16":
        return bf16_bits_to_f64(t.raw)
    if t.dtype in ("F32", "F16", "F64"):
        return t.raw.astype(np.float64)
    raise ValueError(f"{t.name}: {t.dtype} is not a plain float tensor")


def unpack_e2m1(packed):
    """[rows, cols/2] bytes -> [rows, cols] values: element 2j is the low nibble of byte j."""
    rows, half = packed.shape
    out = np.empty((rows, half * 2), dtype=np.float64)
    out[:, 0::2] = E2M1[packed & 0x0F]
    out[:, 1::2] = E2M1[packed >> 4]
    return out


def decode_linear(tensors, weight_name, block_size=(128, 128)):
    """The float64 [out, in] matrix of a Linear weight in whatever layout its tensors show."""
    module = weight_name[: -len(".weight")]
    w = tensors[weight_name]
    if module + ".weight_scale_inv" in tensors and tensors[module + ".weight_scale_inv"].dtype == "U8":
        # MXFP8: e4m3 codes, e8m0 scale 2^(X-127) per 32 inputs
        exps = tensors[module + ".weight_scale_inv"].raw.astype(np.float64) - 127.0
        return E4M3[w.raw] * np.repeat(np.exp2(exps), 32, axis=1)
    if module + ".weight_scale_inv" in tensors:  # block FP8
        s = plain_to_f64(tensors[module + ".weight_scale_inv"])
        q = E4M3[w.raw]
        bn, bk = block_size
        rows, cols = q.shape
        expanded = np.repeat(np.repeat(s, bn, axis=0), bk, axis=1)[:rows, :cols]
        return q * expanded
    if w.dtype == "F8_E4M3":  # channel FP8 ([out, 1] or [out]), or per-tensor FP8 ([])
        s = plain_to_f64(tensors[module + ".weight_scale"]).reshape(-1, 1)
        return E4M3[w.raw] * s
    if w.dtype == "U8":
        scale = tensors[module + ".weight_scale"]
        values = unpack_e2m1(w.raw)
        if scale.dtype == "U8":  # MXFP4: e8m0 scale 2^(X-127) per 32 elements
            exps = scale.raw.astype(np.float64) - 127.0
            return values * np.repeat(np.exp2(exps), 32, axis=1)
        if scale.dtype == "F8_E4M3":  # NVFP4: e4m3 scale per 16, times the global scale
            global_scale = plain_to_f64(tensors[module + ".weight_scale_2"]).reshape(-1)[0]
            return values * np.repeat(E4M3[scale.raw], 16, axis=1) * global_scale
        raise ValueError(f"{weight_name}: U8 weight with a {scale.dtype} scale")
    return plain_to_f64(w)


def as_torch(array):
    return torch.from_numpy(np.ascontiguousarray(array)).to(torch.float64)
