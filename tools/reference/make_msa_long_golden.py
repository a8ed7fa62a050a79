#!/usr/bin/env python3
"""Writes the golden for M3 with the real MSA block geometry on a prompt past 2048 tokens
(tests/data/golden/msa-long/m3-bf16-block128.json, read by tests/unit/model/msa_long_prompt_test.cc).

The checkpoint is the tiny M3 with 4 KV / index heads, sparse_block_size 128 and
sparse_topk_blocks 16 (spec/model.md §1.2, §5.3). make-tiny has no option for that geometry, so the
checkpoint is written by the test binary itself (its disabled test MsaLongPromptTool.
DISABLED_WriteCheckpoint, the same C++ path the test uses); the golden records the shard hash and
the test checks it. Then the float64 reference runs a 2300-token prompt, sparse and dense.

usage: /usr/bin/python3 tools/reference/make_msa_long_golden.py \
           --test-model build/tests/test_model --out tests/data/golden/msa-long
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
from make_goldens import TOP_K, lcg_tokens, rounded  # noqa: E402
from safetensors_io import fnv1a64_of_shards  # noqa: E402

NAME = "m3-bf16-block128"
SEED = 7
VOCAB = 256
TOKENS = 2300
TOKEN_SEED = 3
# One position just below the first selecting one, then positions where 17 and 18 blocks are
# visible (one and two blocks left out per query and index head), and the last.
CHECKED = [2047, 2048, 2100, 2175, 2176, 2250, TOKENS - 1]


def write_checkpoint(test_model, directory):
    env = dict(os.environ, MINIMAX_MSA_LONG_CHECKPOINT=directory,
               MINIMAX_MSA_LONG_SEED=str(SEED), MINIMAX_MSA_LONG_VOCAB=str(VOCAB))
    subprocess.run([test_model, "--gtest_also_run_disabled_tests",
                    "--gtest_filter=MsaLongPromptTool.DISABLED_WriteCheckpoint"],
                   env=env, check=True, stdout=subprocess.DEVNULL)
    if not os.path.isfile(os.path.join(directory, "config.json")):
        sys.exit(f"{test_model} wrote no checkpoint into {directory}")


def golden(directory):
    config = minimax_reference.Config(directory)
    split = config.topk_blocks * config.block
    assert (config.block, config.topk_blocks, config.index_heads) == (128, 16, 4), directory
    tokens = lcg_tokens(TOKENS, VOCAB, TOKEN_SEED)
    reference = minimax_reference.Reference(directory)
    logits = reference.logits(tokens).numpy()
    dense = reference.logits(tokens, dense_attention=True).numpy()
    below = float(np.abs(dense[:split] - logits[:split]).max())
    past = float(np.abs(dense[split:] - logits[split:]).max())
    # The case exists to exercise the block choice: it changes the result past top_k · block
    # tokens and nothing before.
    assert below == 0.0 and past > 1e-2, (below, past)
    out = {
        "case": f"msa-long/{NAME}",
        "arch": "m3",
        "format": "bf16",
        "seed": SEED,
        "writer": "test_model --gtest_also_run_disabled_tests "
                  "--gtest_filter=MsaLongPromptTool.DISABLED_WriteCheckpoint "
                  f"(MINIMAX_MSA_LONG_SEED={SEED} MINIMAX_MSA_LONG_VOCAB={VOCAB})",
        "vocab_size": VOCAB,
        "checkpoint_fnv1a64": fnv1a64_of_shards(directory),
        "reference": "tools/reference/minimax_reference.py, float64 (RoPE angle in float32)",
        "reference_sparse_vs_dense": {"below": below, "past": past},
        "dense_below": split,
        "tokens": tokens,
        "checked": [],
        "last_logits": rounded(logits[-1]),
        "dense_last_logits": rounded(dense[-1]),
    }
    for pos in CHECKED:
        top_ids = sorted(range(VOCAB), key=lambda i: (-logits[pos, i], i))[:TOP_K]
        out["checked"].append({"position": pos, "top_ids": top_ids,
                               "top_logits": rounded(logits[pos, top_ids])})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--test-model", required=True, help="the built tests/test_model binary")
    parser.add_argument("--out", required=True, help="directory for the golden .json file")
    parser.add_argument("--work", default="/tmp/minimax-msa-golden", help="scratch directory")
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
    print(f"{path}: {TOKENS} tokens, checkpoint {g['checkpoint_fnv1a64']}, "
          f"reference max |sparse - dense| below {g['dense_below']} = "
          f"{g['reference_sparse_vs_dense']['below']:.3g}, past = "
          f"{g['reference_sparse_vs_dense']['past']:.3g}")


if __name__ == "__main__":
    main()
