#!/usr/bin/python3
"""Writes the corpus of malformed safetensors files in tests/data/safetensors_bad/.

Each file breaks one rule of the format; tests/unit/formats/safetensors_corpus_test.cc checks the
exact error message for each (expected_errors.json). The files double as the fuzzer's seed corpus.
Run: /usr/bin/python3 tools/make_bad_safetensors.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "safetensors_bad")


def pack(header_text: bytes, data: bytes = b"") -> bytes:
    return struct.pack("<Q", len(header_text)) + header_text + data


def header(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


CASES = {
    "too_small": b"\x01\x02\x03",
    "header_too_large": struct.pack("<Q", 100_000_001) + b"{}",
    "header_past_end": struct.pack("<Q", 1000) + b"{}",
    "not_json": pack(b"{\"a\": {"),
    "not_object": pack(b"[1, 2, 3]"),
    "invalid_utf8": pack(b"{\"\xff\xfe\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", b"\0"),
    "unknown_dtype": pack(header({"w": {"dtype": "F12", "shape": [1], "data_offsets": [0, 1]}}), b"\0"),
    "missing_offsets": pack(header({"w": {"dtype": "U8", "shape": [1]}}), b"\0"),
    "negative_dim": pack(header({"w": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}}), b"\0"),
    "float_dim": pack(header({"w": {"dtype": "U8", "shape": [1.5], "data_offsets": [0, 1]}}), b"\0"),
    "offsets_gap": pack(header({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                "b": {"dtype": "U8", "shape": [4], "data_offsets": [8, 12]}}), b"\0" * 12),
    "offsets_overlap": pack(header({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
                                    "b": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}), b"\0" * 6),
    "end_before_begin": pack(header({"a": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]},
                                     "b": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]},
                                     "c": {"dtype": "U8", "shape": [4], "data_offsets": [4, 0]}}), b""),
    "size_mismatch": pack(header({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}), b"\0" * 4),
    "truncated": pack(header({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}), b"\0" * 10),
    "trailing_data": pack(header({"w": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}}), b"\0" * 9),
    "shape_overflow": pack(header({"w": {"dtype": "U8", "shape": [2**40, 2**40], "data_offsets": [0, 1]}}), b"\0"),
    "bits_overflow": pack(header({"w": {"dtype": "F64", "shape": [2**61], "data_offsets": [0, 8]}}), b"\0" * 8),
    "offset_too_big": pack(b"{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,18446744073709551616]}}", b"\0"),
    "f4_odd": pack(header({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}), b"\0\0"),
    "duplicate_name": pack(b"{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                           b"\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", b"\0"),
    "metadata_not_string": pack(header({"__metadata__": {"format": 1},
                                        "w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}), b"\0"),
    "entry_not_object": pack(header({"w": [1, 2]})),
    "shape_not_array": pack(header({"w": {"dtype": "U8", "shape": 1, "data_offsets": [0, 1]}}), b"\0"),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, content in CASES.items():
        with open(os.path.join(OUT, name + ".safetensors"), "wb") as f:
            f.write(content)
    print(f"wrote {len(CASES)} files to {OUT}")
