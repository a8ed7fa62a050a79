#!/usr/bin/python3
"""Shows that the tiny model finds needles because its MSA index picks the right blocks: for
held-out needle problems, the answer is scored teacher-forced (every answer token, and the EOS,
must be the argmax; that is exactly "greedy decoding gives the expected answer") with
  - the engine, MSA on (`minimax logits`),
  - the engine, dense attention on the MSA layers (`--dense-attention`),
  - the training model with the index scores replaced by random ones (blocks chosen blindly),
and reports how many of the needle's sentence blocks the index selected at the answer position.

    needle_sparsity.py --minimax BIN --model DIR --state (state.pt | weights.npz)
                       [--per-length 20]"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from data_io import load_checkpoint  # noqa: E402
import model as tiny  # noqa: E402
import tasks  # noqa: E402
import train  # noqa: E402

SALT = 3 << 40


def encode(binary, tokenizer, texts):
    result = subprocess.run([binary, "tokenizer", "encode", "--tokenizer", tokenizer],
                            input="".join(json.dumps(t) + "\n" for t in texts),
                            capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()]


def engine_logits(minimax, model, ids, dense):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "x.npy")
        command = [minimax, "logits", "--kv-cache-dtype", "f32", "--model", model, "--tokens", ",".join(map(str, ids)),
                   "--all-positions", "--output", out, "--threads", "1"]
        if dense:
            command.append("--dense-attention")
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        return np.load(out).reshape(len(ids), -1)


def answer_correct(logits, ids, start):
    """Every token from `start` on is predicted (argmax) from the position before it."""
    predicted = np.asarray(logits)[start - 1:len(ids) - 1].argmax(-1)
    return bool((predicted == np.asarray(ids[start:])).all())


def random_index_model(state_path, seed):
    weights, info = load_checkpoint(state_path)
    net = tiny.TinyM3(tiny.text_config(train.PADDED_VOCAB, **info.get("shape", {})))
    net.load_state_dict(weights)
    generator = torch.Generator().manual_seed(seed)
    for layer in net.layers:
        if layer.attn.sparse:
            original = layer.attn.block_scores

            def blind(iq, ik, visible, original=original):
                s = original(iq, ik, visible)
                noise = torch.rand(s.shape, generator=generator)
                return torch.where(torch.isfinite(s), noise, s)
            layer.attn.block_scores = blind
    return net


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minimax", required=True)
    parser.add_argument("--tokenizer-bin")
    parser.add_argument("--model", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--per-length", type=int, default=20)
    args = parser.parse_args()
    blind = random_index_model(args.state, 7)
    tokenizer = os.path.join(args.model, "tokenizer.json")
    print("S   tokens  blocks  MSA   dense  random-index")
    for S in (8, 32, 64):
        counts = np.zeros(3, dtype=int)
        lengths = []
        for i in range(args.per_length):
            problem = tasks.needle(tasks.Rng(SALT + S * 1000 + i), sentences=S)
            segments = tasks.render(problem)
            prompt = "".join(t for t, target in segments[:1])
            answer = segments[1][0]  # '</mm:think>' + value + EOS
            ids_prompt, ids_answer = encode(args.tokenizer_bin or args.minimax, tokenizer,
                                            [prompt, answer])
            ids = ids_prompt + ids_answer
            start = len(ids_prompt)
            lengths.append(len(ids))
            counts[0] += answer_correct(engine_logits(args.minimax, args.model, ids, False),
                                        ids, start)
            counts[1] += answer_correct(engine_logits(args.minimax, args.model, ids, True),
                                        ids, start)
            with torch.no_grad():
                logits, _ = blind(torch.tensor([ids]), True)
            counts[2] += answer_correct(logits[0].numpy(), ids, start)
        n = args.per_length
        mean = int(np.mean(lengths))
        print(f"{S:<3d} {mean:6d}  {(mean + 15) // 16:6d}  {counts[0]}/{n}  {counts[1]}/{n}  "
              f"{counts[2]}/{n}", flush=True)


if __name__ == "__main__":
    main()
