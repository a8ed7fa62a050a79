#!/usr/bin/env python3
"""Writes the golden for M3's MSA at the release geometry out to 131,072 tokens
(tests/data/golden/msa-long/m3-1layer-131072.json, read by tests/unit/model/msa_128k_test.cc).

The checkpoint is a one-layer tiny M3 (MoE + MSA; 4 KV and index heads, sparse_block_size 128,
sparse_topk_blocks 16, the local block forced), written by the test binary itself (its disabled
test Msa128kTool.DISABLED_WriteCheckpoint); the golden records the shard hash. With one layer
every key, value and index key depends on its own token only, so the float64 reference computes
each checked query alone in O(T) (minimax_reference.Reference.logits_at); before using that path
the script checks it against the full forward (Reference.logits) on the first 2300 tokens.

For each checked position the golden holds each index head's chosen blocks with the margin of
the choice (how far the weakest chosen block's score is above the best one left out), and the
top-8 logits. The tokens are the LCG of make_goldens.py (seed and count stored, not the ids).

usage: /usr/bin/python3 tools/reference/make_msa_128k_golden.py \
           --test-model build/tests/test_model --out tests/data/golden/msa-long
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minimax_reference  # noqa: E402
from make_goldens import TOP_K, lcg_tokens, rounded  # noqa: E402
from safetensors_io import fnv1a64_of_shards  # noqa: E402

NAME = "m3-1layer-131072"
SEED = 11
VOCAB = 256
TOKENS = 131072
TOKEN_SEED = 5
SELF_CHECK_TOKENS = 2300
# Dense region (every block chosen), the first selecting positions, block and page edges inside
# the first 5120 tokens (the fast test runs 2560 of them), the doubling lengths, and the last
# four; plus a seeded sample.
FIXED = [0, 15, 16, 127, 128, 1000, 2047, 2048, 2175, 2176, 2200, 2303, 2500, 3071, 3583, 4095,
         4500, 5119, 8191, 16383, 32767, 65535, 131068, 131069, 131070, 131071]
SAMPLED = 24


def write_checkpoint(test_model, directory):
    env = dict(os.environ, MINIMAX_MSA_128K_CHECKPOINT=directory,
               MINIMAX_MSA_128K_SEED=str(SEED), MINIMAX_MSA_128K_VOCAB=str(VOCAB))
    subprocess.run([test_model, "--gtest_also_run_disabled_tests",
                    "--gtest_filter=Msa128kTool.DISABLED_WriteCheckpoint"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    if not os.path.isfile(os.path.join(directory, "config.json")):
        sys.exit(f"{test_model} wrote no checkpoint into {directory}")


def checked_positions():
    rng = random.Random(2026)
    sample = {rng.randrange(5120, TOKENS) for _ in range(SAMPLED)}
    return sorted(set(FIXED) | sample)


def self_check(reference, tokens):
    """logits_at must be the full forward's logits (same float64 reference, other order)."""
    few = tokens[:SELF_CHECK_TOKENS]
    full = reference.logits(few).numpy()
    queries = [p for p in checked_positions() if p < SELF_CHECK_TOKENS] + [SELF_CHECK_TOKENS - 1]
    alone, _ = reference.logits_at(few, queries)
    gap = float(np.abs(full[queries] - alone.numpy()).max())
    assert gap < 1e-9, f"logits_at differs from logits by {gap}"
    return gap


def golden(directory):
    config = minimax_reference.Config(directory)
    assert (config.layers, config.block, config.topk_blocks, config.index_heads) == \
        (1, 128, 16, 4), directory
    tokens = lcg_tokens(TOKENS, VOCAB, TOKEN_SEED)
    reference = minimax_reference.Reference(directory)
    self_gap = self_check(reference, tokens)
    positions = checked_positions()
    logits, choices = reference.logits_at(tokens, positions)
    logits = logits.numpy()
    last = positions.index(TOKENS - 1)
    dense_last, _ = reference.logits_at(tokens, [TOKENS - 1], dense_attention=True)
    dense_gap = float(np.abs(dense_last.numpy()[0] - logits[last]).max())
    assert dense_gap > 1e-2, dense_gap  # the choice matters at the end of the context
    margins = [m for choice in choices for _, m in choice if m != float("inf")]
    out = {
        "case": f"msa-long/{NAME}",
        "arch": "m3",
        "format": "bf16",
        "seed": SEED,
        "writer": "test_model --gtest_also_run_disabled_tests "
                  "--gtest_filter=Msa128kTool.DISABLED_WriteCheckpoint "
                  f"(MINIMAX_MSA_128K_SEED={SEED} MINIMAX_MSA_128K_VOCAB={VOCAB})",
        "vocab_size": VOCAB,
        "index_heads": config.index_heads,
        "topk_blocks": config.topk_blocks,
        "checkpoint_fnv1a64": fnv1a64_of_shards(directory),
        "reference": "tools/reference/minimax_reference.py Reference.logits_at, float64 (RoPE "
                     "angle in float32)",
        "logits_at_vs_logits": self_gap,
        "reference_sparse_vs_dense_last": dense_gap,
        "smallest_margin": min(margins),
        "tokens": {"lcg_seed": TOKEN_SEED, "count": TOKENS, "first": tokens[:16]},
        "checked": [],
    }
    for i, pos in enumerate(positions):
        top_ids = sorted(range(VOCAB), key=lambda v: (-logits[i, v], v))[:TOP_K]
        out["checked"].append({
            "position": pos,
            "choice": [{"blocks": blocks,
                        "margin": None if m == float("inf") else float(f"{m:.6g}")}
                       for blocks, m in choices[i]],
            "top_ids": top_ids,
            "top_logits": rounded(logits[i, top_ids]),
        })
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test-model", required=True, help="the built tests/test_model binary")
    parser.add_argument("--out", required=True, help="directory for the golden .json file")
    parser.add_argument("--work", default="/tmp/minimax-msa-128k-golden", help="scratch directory")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    os.makedirs(args.out, exist_ok=True)
    directory = os.path.join(args.work, NAME)
    write_checkpoint(os.path.abspath(args.test_model), directory)
    g = golden(directory)
    path = os.path.join(args.out, f"{NAME}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(f"{path}: {len(g['checked'])} positions of {TOKENS} tokens, checkpoint "
          f"{g['checkpoint_fnv1a64']}, smallest margin {g['smallest_margin']:.3g}, reference "
          f"sparse vs dense at the last position {g['reference_sparse_vs_dense_last']:.3g}")


if __name__ == "__main__":
    main()
