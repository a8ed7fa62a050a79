#!/usr/bin/python3
"""Teacher-forced loss and next-token accuracy of a training state on the assistant tokens of
held-out problems, per task: finer-grained than exact-match accuracy while the model is weak.

    token_accuracy.py --state (state.pt | weights.npz) --tokenizer tokenizer.json --minimax BIN
                      [--per-task 20]"""

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data_io import load_checkpoint  # noqa: E402
import model as tiny  # noqa: E402
import tasks  # noqa: E402
import train  # noqa: E402

SALT = 5 << 40


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", required=True, help="state.pt or an --export-model .npz")
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--minimax", required=True)
    parser.add_argument("--per-task", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    weights, info = load_checkpoint(args.state)
    net = tiny.TinyM3(tiny.text_config(train.PADDED_VOCAB, **info.get("shape", {})))
    net.load_state_dict(weights)
    print("task        loss/token  token accuracy")
    for name in ("arithmetic", "copy", "recall", "tool", "needle"):
        problems = [tasks.GENERATORS[name](tasks.Rng(SALT + i)) for i in range(args.per_task)]
        sequences = zip(*train.tokenize_problems(args.minimax, args.tokenizer, problems))
        total = count = correct = 0
        for ids, mask in sequences:
            with torch.no_grad():
                logits, _ = net(torch.tensor([ids]), True)
            logp = torch.log_softmax(logits[0, :-1], -1)
            target = torch.tensor(ids[1:])
            m = torch.tensor(mask[1:])
            total += -logp[torch.arange(len(target)), target][m].sum().item()
            correct += (logits[0, :-1].argmax(-1)[m] == target[m]).sum().item()
            count += m.sum().item()
        print(f"{name:11s} {total / count:10.3f}  {correct / count:14.3f}", flush=True)


if __name__ == "__main__":
    main()
