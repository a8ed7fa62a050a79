#!/usr/bin/env python3
"""Writes the golden logits the model tests compare against (tests/data/golden/*.json).

For every case it builds a tiny checkpoint with `minimax make-tiny` (fixed seed), runs the
independent float64 reference (minimax_reference.py) on a fixed token list, and records the
top-k logits at a few positions and the full logits of the last position, together with the
make-tiny command, the seed and a hash of the shard bytes (the tests regenerate the checkpoint
and check the hash before comparing). Checkpoints are not committed; goldens are small.

usage: /usr/bin/python3 tools/reference/make_goldens.py --minimax build/minimax \
           --out tests/data/golden [--work /tmp/minimax-goldens]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minimax_reference  # noqa: E402
from safetensors_io import fnv1a64_of_shards  # noqa: E402

SEED = 7
FORMATS = ["bf16", "fp8-block", "fp8-channel", "mxfp4", "nvfp4", "mxfp8", "mxfp4-fp8attn"]
TOP_K = 8


def lcg_tokens(count, vocab, seed):
    """Deterministic token ids (the list itself is stored in the golden)."""
    state, out = seed, []
    for _ in range(count):
        state = (state * 1103515245 + 12345) % (1 << 31)
        out.append(state % vocab)
    return out


def cases():
    """(name, arch, format, token count, token seed, checked positions, with dense logits)."""
    out = []
    for arch in ("m2", "m3"):
        for fmt in FORMATS:
            out.append((f"{arch}-{fmt}", arch, fmt, 24, 1, [0, 11, 23], False))
    # Tiny M3: blocks of 16 tokens, top-4 blocks, so the sparse choice matters from position 64.
    for fmt in ("bf16", "mxfp4"):
        out.append((f"m3-{fmt}-long", "m3", fmt, 160, 2, [40, 63, 64, 100, 130, 159], True))
    return out


def rounded(values):
    return [float(f"{v:.9g}") for v in values]


def make_checkpoint(minimax, work, arch, fmt):
    directory = os.path.join(work, f"{arch}-{fmt}")
    if not os.path.isdir(directory):
        subprocess.run([minimax, "make-tiny", "--arch", arch, "--format", fmt, "--seed", str(SEED),
                        "--output", directory], check=True, stdout=subprocess.DEVNULL)
    return directory


def golden(minimax, work, case):
    name, arch, fmt, count, token_seed, checked, with_dense = case
    directory = make_checkpoint(minimax, work, arch, fmt)
    config = minimax_reference.Config(directory)
    with open(os.path.join(directory, "config.json")) as f:
        top = json.load(f)
    vocab = (top["text_config"] if arch == "m3" else top)["vocab_size"]
    tokens = lcg_tokens(count, vocab, token_seed)
    reference = minimax_reference.Reference(directory)
    logits = reference.logits(tokens).numpy()
    out = {
        "case": name,
        "arch": arch,
        "format": fmt,
        "seed": SEED,
        "make_tiny": f"minimax make-tiny --arch {arch} --format {fmt} --seed {SEED} --output DIR",
        "vocab_size": vocab,
        "checkpoint_fnv1a64": fnv1a64_of_shards(directory),
        "reference": "tools/reference/minimax_reference.py, float64 (RoPE angle in float32)",
        "tokens": tokens,
        "checked": [],
        "last_logits": rounded(logits[-1]),
    }
    for pos in checked:
        top_ids = sorted(range(vocab), key=lambda i: (-logits[pos, i], i))[:TOP_K]
        out["checked"].append({"position": pos, "top_ids": top_ids,
                               "top_logits": rounded(logits[pos, top_ids])})
    if with_dense:
        dense = reference.logits(tokens, dense_attention=True).numpy()
        sparse_gap = float(np.abs(dense[-1] - logits[-1]).max())
        early_gap = float(np.abs(dense[:64] - logits[:64]).max())
        # The case exists to exercise the block choice: it must change the result, and only
        # from position top_k * block on.
        assert sparse_gap > 1e-2 and early_gap == 0.0, (name, sparse_gap, early_gap)
        out["dense_last_logits"] = rounded(dense[-1])
        out["dense_below"] = config.topk_blocks * config.block
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minimax", required=True, help="the built minimax binary")
    parser.add_argument("--out", required=True, help="directory for the golden .json files")
    parser.add_argument("--work", default="/tmp/minimax-goldens", help="scratch directory")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    os.makedirs(args.out, exist_ok=True)
    for case in cases():
        g = golden(os.path.abspath(args.minimax), args.work, case)
        path = os.path.join(args.out, f"{case[0]}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(g, f, separators=(",", ":"))
            f.write("\n")
        os.replace(path + ".tmp", path)
        print(f"{path}: {len(g['tokens'])} tokens, checkpoint {g['checkpoint_fnv1a64']}")


if __name__ == "__main__":
    main()
