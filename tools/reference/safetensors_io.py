"""Minimal safetensors reader for the PyTorch reference (the pip `safetensors` package is not
available): header JSON, the shard index, and every tensor's raw bytes as a numpy array."""

import json
import os
import struct

import numpy as np

# Element types this reference needs, as numpy dtypes of the raw storage. FP8 and BF16 have no
# numpy type: they are read as their bit patterns (uint8 / uint16) and decoded in layouts.py.
_RAW = {
    "BOOL": np.uint8, "U8": np.uint8, "I8": np.int8, "F8_E4M3": np.uint8, "F8_E5M2": np.uint8,
    "F8_E8M0": np.uint8, "I16": np.int16, "U16": np.uint16, "F16": np.float16, "BF16": np.uint16,
    "I32": np.int32, "U32": np.uint32, "F32": np.float32, "F64": np.float64, "I64": np.int64,
    "U64": np.uint64,
}


class Tensor:
    def __init__(self, name, dtype, shape, raw):
        self.name, self.dtype, self.shape, self.raw = name, dtype, tuple(shape), raw

    def __repr__(self):
        return f"Tensor({self.name}, {self.dtype}, {list(self.shape)})"


def read_file(path):
    """All tensors of one .safetensors file: name -> Tensor (raw array shaped as in the header)."""
    with open(path, "rb") as f:
        blob = f.read()
    (header_len,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    data = blob[8 + header_len:]
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        if dtype not in _RAW:
            raise ValueError(f"{path}: tensor {name}: dtype {dtype} not handled by the reference")
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[begin:end], dtype=np.dtype(_RAW[dtype]).newbyteorder("<"))
        out[name] = Tensor(name, dtype, info["shape"], raw.reshape(info["shape"]))
    return out


def read_checkpoint(directory):
    """Every tensor of a checkpoint directory (sharded with model.safetensors.index.json, or a
    single model.safetensors)."""
    index_path = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
    else:
        shards = ["model.safetensors"]
    tensors = {}
    for shard in shards:
        for name, t in read_file(os.path.join(directory, shard)).items():
            if name in tensors:
                raise ValueError(f"{directory}: tensor {name} in two shards")
            tensors[name] = t
    return tensors


def shard_files(directory):
    return sorted(f for f in os.listdir(directory) if f.endswith(".safetensors"))


def fnv1a64_of_shards(directory):
    """FNV-1a 64 over the bytes of every shard, in file-name order: identifies the exact weights
    a golden was computed from (tests regenerate the checkpoint and compare)."""
    h = 0xCBF29CE484222325
    prime = 0x100000001B3
    mask = 0xFFFFFFFFFFFFFFFF
    for name in shard_files(directory):
        with open(os.path.join(directory, name), "rb") as f:
            for byte in f.read():
                h = ((h ^ byte) * prime) & mask
    return f"{h:016x}"
