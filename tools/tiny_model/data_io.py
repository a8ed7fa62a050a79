"""The tiny model's files: tokenizing rendered conversations with `minimax tokenizer encode`, the
packed training / held-out sets (train.npz, heldout.npz) and the weights-only .npz that
`train.py train --export-model` writes. Plain numpy files, so they travel between machines and
torch versions."""

import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks  # noqa: E402


def encode_lines(minimax, tokenizer, texts):
    result = subprocess.run([minimax, "tokenizer", "encode", "--tokenizer", tokenizer],
                            input="".join(json.dumps(t) + "\n" for t in texts),
                            capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()]


def tokenize_problems(minimax, tokenizer, problems):
    """(token lists, target-mask lists) of whole rendered conversations."""
    segments, owners = [], []
    for i, problem in enumerate(problems):
        for text, target in tasks.render(problem):
            segments.append(text)
            owners.append((i, target))
    ids = encode_lines(minimax, tokenizer, segments)
    tokens = [[] for _ in problems]
    targets = [[] for _ in problems]
    for (i, target), piece in zip(owners, ids):
        tokens[i].extend(piece)
        targets[i].extend([target] * len(piece))
    return tokens, targets


def save_packed(path, tokens, targets, kinds, begin_token):
    """One compressed .npz: each conversation cut after its third `]~b]` (system, developer,
    user) into a header (one of a few fixed token strings: thinking mode x tools, stored once)
    and the rest, concatenated. Small enough to carry to another machine."""
    headers, group, rest, rest_targets = {}, [], [], []
    for t, m in zip(tokens, targets):
        t, m = np.array(t, dtype=np.uint16), np.array(m, dtype=np.bool_)
        at = np.nonzero(t == begin_token)[0][2] + 1
        assert not m[:at].any()
        group.append(headers.setdefault(t[:at].tobytes(), len(headers)))
        rest.append(t[at:])
        rest_targets.append(m[at:])
    names = sorted(set(kinds))
    prefixes = [np.frombuffer(k, dtype=np.uint16) for k in headers]
    np.savez_compressed(
        path + ".tmp.npz", tokens=np.concatenate(rest), targets=np.concatenate(rest_targets),
        lengths=np.array([len(r) for r in rest], dtype=np.int32),
        group=np.array(group, dtype=np.int16),
        prefixes=np.concatenate(prefixes), prefix_lengths=[len(p) for p in prefixes],
        kind_names=np.array(names), kinds=np.array([names.index(k) for k in kinds], np.int16))
    os.replace(path + ".tmp.npz", path)


def load_packed(path):
    """The dict batches() / collate() read: per-conversation token and target arrays (after the
    header), their header group, the headers, and each conversation's task name."""
    z = np.load(path)
    cuts = np.cumsum(z["lengths"])[:-1]
    pcuts = np.cumsum(z["prefix_lengths"])[:-1]
    names = list(z["kind_names"])
    return {"tokens": np.split(z["tokens"].astype(np.int64), cuts),
            "targets": np.split(z["targets"], cuts), "group": [int(g) for g in z["group"]],
            "prefixes": [torch.from_numpy(p) for p in np.split(z["prefixes"].astype(np.int64),
                                                                 pcuts)],
            "kinds": [str(names[k]) for k in z["kinds"]]}


def save_weights(path, net, info):
    """The weights alone as a plain .npz (readable by any numpy and torch version): the matrices
    the export stores in BF16 already rounded to BF16 (as uint16 bits: half the bytes, the same
    exported checkpoint); the router and the 1-D tensors float32."""
    arrays = {"info": np.array(json.dumps(info))}
    for k, v in net.state_dict().items():
        v = v.detach().cpu()
        if v.dim() == 2 and not k.endswith("router"):
            arrays["bf16:" + k] = v.to(torch.bfloat16).view(torch.int16).numpy()
        else:
            arrays["f32:" + k] = v.float().numpy()
    with open(path + ".tmp", "wb") as f:
        np.savez(f, **arrays)
    os.replace(path + ".tmp", path)


def load_weights(path):
    """(state dict in float32, info) from save_weights."""
    z = np.load(path)
    state = {}
    for key in z.files:
        kind, _, name = key.partition(":")
        if kind == "bf16":
            state[name] = torch.from_numpy(z[key]).view(torch.bfloat16).float()
        elif kind == "f32":
            state[name] = torch.from_numpy(z[key])
    return state, json.loads(str(z["info"]))


def load_checkpoint(path):
    """(float32 state dict, info with "shape") from a training state.pt or an --export-model
    .npz: the two forms every tool that reads trained weights accepts."""
    if path.endswith(".npz"):
        return load_weights(path)
    state = torch.load(path, map_location="cpu")
    return state["model"], state
