#!/usr/bin/python3
"""Checks an exported tiny-model checkpoint against the engine: `minimax inspect` must pass and
`minimax logits` (MSA on, and with --dense-attention) must agree with the float64 reference of
tools/reference on a held-out conversation long enough for the MSA layers to choose blocks.

    check_export.py --minimax BIN --model DIR"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reference"))
import tasks  # noqa: E402
import minimax_reference  # noqa: E402


def training_model_logits(state_path, ids, dense):
    import torch
    import model as tiny
    import train
    from data_io import load_checkpoint
    state, info = load_checkpoint(state_path)
    net = tiny.TinyM3(tiny.text_config(train.PADDED_VOCAB, **info.get("shape", {})))
    rounded = {}
    for name, value in state.items():  # as exported: BF16 except the router and its bias
        keep = name.endswith("router") or name.endswith("bias")
        rounded[name] = value if keep else value.to(torch.bfloat16).float()
    net.load_state_dict(rounded)
    with torch.no_grad():
        logits, _ = net(torch.tensor([ids]), not dense)
    return logits[0].double().numpy()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minimax", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--sentences", type=int, default=30)
    parser.add_argument("--state", help="training state.pt or weights .npz: also compare the "
                        "training model")
    parser.add_argument("--tokenizer-bin", help="binary with `tokenizer encode` (default --minimax)")
    args = parser.parse_args()
    subprocess.run([args.minimax, "inspect", args.model], check=True, stdout=subprocess.DEVNULL)
    print("inspect: ok")
    problem = tasks.needle(tasks.Rng(12345), sentences=args.sentences)
    text = "".join(t for t, _ in tasks.render(problem))
    ids = json.loads(subprocess.run(
        [args.tokenizer_bin or args.minimax, "tokenizer", "encode", "--tokenizer",
         os.path.join(args.model, "tokenizer.json")], input=json.dumps(text) + "\n",
        capture_output=True, text=True, check=True).stdout)
    print(f"{len(ids)} tokens")
    reference = minimax_reference.Reference(args.model)
    worst = 0.0
    for dense in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "x.npy")
            command = [args.minimax, "logits", "--kv-cache-dtype", "f32", "--model", args.model, "--tokens",
                       ",".join(map(str, ids)), "--all-positions", "--output", out,
                       "--threads", "1"]
            if dense:
                command.append("--dense-attention")
            subprocess.run(command, check=True, stderr=subprocess.DEVNULL)
            engine = np.load(out).reshape(len(ids), -1)
        expected = reference.logits(ids, dense_attention=dense).numpy()
        diff = np.abs(engine - expected).max()
        agree = (engine.argmax(-1) == expected.argmax(-1)).mean()
        print(f"{'dense' if dense else 'MSA  '}: max |engine - reference| = {diff:.2e} "
              f"(logit scale {np.abs(expected).max():.1f}), argmax agreement {agree:.4f}")
        worst = max(worst, diff)
        if args.state:
            mine = training_model_logits(args.state, ids, dense)
            print(f"        max |training model (bf16 weights) - reference| = "
                  f"{np.abs(mine - expected).max():.2e}, argmax agreement "
                  f"{(mine.argmax(-1) == expected.argmax(-1)).mean():.4f}")
    sys.exit(0 if worst < 5e-2 else 1)


if __name__ == "__main__":
    main()
