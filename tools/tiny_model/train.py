#!/usr/bin/python3
"""Trains the tiny MiniMax-M3 model on the synthetic tasks (docs/tiny_model_tasks.md).

    train.py data  --minimax BIN --work DIR [--train N]     # tokenizer + tokenized training set
    train.py train --work DIR --steps S [--seed 1]           # resumable (DIR/state.pt every 100 steps)
    train.py export --work DIR --output models/minimax-m3-tiny

Everything is seeded (data seeds, tokenizer, init, batch order); torch on another machine or
thread count may still round differently, so the checkpoint is reproducible in distribution, not
bit for bit. The tokenizer is trained by `minimax tokenizer train` on rendered conversations with
the digits removed, so numbers stay one token per digit (arithmetic is learnable at this size)."""

import argparse
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model as tiny  # noqa: E402
import tasks  # noqa: E402

TRAIN_SALT = 1 << 40  # training problems use seeds TRAIN_SALT + i; held-out ones other seeds
VOCAB = 1024          # BPE tokens before the special tokens
PADDED_VOCAB = 1088   # embedding rows (multiple of 64)
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def encode_lines(minimax, tokenizer, texts):
    result = subprocess.run([minimax, "tokenizer", "encode", "--tokenizer", tokenizer],
                            input="".join(json.dumps(t) + "\n" for t in texts),
                            capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()]


def cmd_data(args):
    os.makedirs(args.work, exist_ok=True)
    corpus = os.path.join(args.work, "corpus.jsonl")
    with open(corpus, "w") as f:
        for i in range(2000):
            text = "".join(t for t, _ in tasks.render(tasks.sample(TRAIN_SALT + 10**9 + i)))
            f.write(json.dumps(re.sub(r"[0-9]", "", text)) + "\n")
    tokenizer = os.path.join(args.work, "tokenizer.json")
    subprocess.run([args.minimax, "tokenizer", "train", "--corpus", corpus, "--vocab-size",
                    str(VOCAB), "--output", tokenizer], check=True)
    t0 = time.time()
    segments, owners = [], []
    kinds = []
    for i in range(args.train):
        problem = tasks.sample(TRAIN_SALT + i)
        kinds.append(problem["task"])
        for text, target in tasks.render(problem):
            segments.append(text)
            owners.append((i, target))
    print(f"rendered {args.train} conversations in {time.time() - t0:.0f}s", flush=True)
    ids = encode_lines(args.minimax, tokenizer, segments)
    tokens = [[] for _ in range(args.train)]
    targets = [[] for _ in range(args.train)]
    for (i, target), piece in zip(owners, ids):
        tokens[i].extend(piece)
        targets[i].extend([target] * len(piece))
    # The concatenation of segments must equal the encoding of the whole text (checked on some).
    whole = encode_lines(args.minimax, tokenizer, [
        "".join(t for t, _ in tasks.render(tasks.sample(TRAIN_SALT + i))) for i in range(50)])
    assert all(w == tokens[i] for i, w in enumerate(whole)), "segment encoding differs"
    lengths = np.array([len(t) for t in tokens])
    print(f"tokens: total {lengths.sum()}, mean {lengths.mean():.0f}, max {lengths.max()}",
          flush=True)
    torch.save({"tokens": [np.array(t, dtype=np.int16) for t in tokens],
                "targets": [np.array(t, dtype=np.bool_) for t in targets], "kinds": kinds},
               os.path.join(args.work, "data.pt"))


def split_prefixes(data, begin_token):
    """Cuts every conversation after its third `]~b]` (system, developer, user): the header
    before it is one of a few fixed token strings (thinking mode x tools), run once per batch."""
    prefixes, keys = {}, []
    for i, t in enumerate(data["tokens"]):
        at = np.nonzero(t == begin_token)[0][2] + 1
        assert not data["targets"][i][:at].any()
        key = t[:at].tobytes()
        prefixes.setdefault(key, torch.from_numpy(t[:at].astype(np.int64)))
        keys.append(key)
        data["tokens"][i] = t[at:]
        data["targets"][i] = data["targets"][i][at:]
    order = sorted(prefixes)
    data["group"] = [order.index(k) for k in keys]
    data["prefixes"] = [prefixes[k] for k in order]
    print("header lengths:", [len(p) for p in data["prefixes"]], flush=True)


def batches(data, budget, seed):
    """Endless batches of similar-length samples of one header, at most `budget` padded tokens
    (queries x keys, roughly) each."""
    rng = random.Random(seed)
    n = len(data["tokens"])
    epoch = 0
    while True:
        order = list(range(n))
        rng.shuffle(order)
        out = []
        for start in range(0, n, 4096):  # sort within windows: little padding, still shuffled
            window = sorted(order[start:start + 4096],
                            key=lambda i: (data["group"][i], len(data["tokens"][i])))
            batch, longest = [], 0
            for i in window:
                size = len(data["tokens"][i])
                if batch and (data["group"][i] != data["group"][batch[0]] or
                              max(longest, size) * (len(batch) + 1) > budget):
                    out.append(batch)
                    batch, longest = [], 0
                batch.append(i)
                longest = max(longest, size)
            if batch:
                out.append(batch)
        rng.shuffle(out)
        for batch in out:
            yield epoch, batch
        epoch += 1


def collate(data, batch):
    T = max(len(data["tokens"][i]) for i in batch)
    tokens = torch.zeros(len(batch), T, dtype=torch.long)
    mask = torch.zeros(len(batch), T, dtype=torch.bool)
    for row, i in enumerate(batch):
        t = torch.from_numpy(data["tokens"][i].astype(np.int64))
        tokens[row, :len(t)] = t
        mask[row, :len(t)] = torch.from_numpy(data["targets"][i])
    return tokens, mask


def lr_at(step, steps, peak):
    warmup = 50
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


def cmd_train(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    data = torch.load(os.path.join(args.work, "data.pt"))
    tok = json.load(open(os.path.join(args.work, "tokenizer.json")))
    begin = {a["content"]: a["id"] for a in tok["added_tokens"]}["]~b]"]
    split_prefixes(data, begin)
    config = tiny.text_config(PADDED_VOCAB)
    net = tiny.TinyM3(config)
    decay = [p for n, p in net.named_parameters() if p.dim() == 2]
    rest = [p for n, p in net.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": rest, "weight_decay": 0.0}], lr=args.lr,
                            betas=(0.9, 0.95))
    state_path = os.path.join(args.work, "state.pt")
    step, elapsed = 0, 0.0
    if os.path.exists(state_path):
        state = torch.load(state_path)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, elapsed = state["step"], state["elapsed"]
        print(f"resumed at step {step}", flush=True)
    stream = batches(data, args.budget, args.seed)
    for _ in range(step):  # replay the batch order up to the resumed step
        next(stream)
    lr_steps = args.lr_steps or args.steps
    sparse_from = int(lr_steps * args.sparse_from)
    log_tokens, log_start = 0, time.time()
    losses = []
    while step < args.steps:
        epoch, batch = next(stream)
        tokens, mask = collate(data, batch)
        use_sparse = step >= sparse_from
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lr_steps, args.lr)
        prefix = data["prefixes"][data["group"][batch[0]]]
        target_mask = mask[:, 1:]
        logits, index_loss = net(tokens[:, :-1], use_sparse, prefix, only=target_mask)
        lm = F.cross_entropy(logits, tokens[:, 1:][target_mask])
        loss = lm + (index_loss if index_loss is not None else 0.0)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        for layer in net.layers:
            if layer.moe:
                layer.ffn.update_bias(1e-3)
        step += 1
        log_tokens += tokens.numel()
        losses.append((lm.item(), index_loss.item() if index_loss is not None else 0.0))
        if step % args.log_every == 0 or step == args.steps:
            now = time.time()
            elapsed += now - log_start
            lm_avg = sum(a for a, _ in losses) / len(losses)
            il_avg = sum(b for _, b in losses) / len(losses)
            print(f"step {step}/{args.steps} epoch {epoch} lm {lm_avg:.4f} index {il_avg:.4f} "
                  f"sparse {int(use_sparse)} lr {lr_at(step, lr_steps, args.lr):.2e} "
                  f"{log_tokens / (now - log_start):.0f} tok/s elapsed {elapsed:.0f}s", flush=True)
            log_tokens, log_start, losses = 0, now, []
        if step % 100 == 0 or step == args.steps:
            torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step,
                        "elapsed": elapsed}, state_path + ".tmp")
            os.replace(state_path + ".tmp", state_path)


def cmd_export(args):
    config = tiny.text_config(PADDED_VOCAB)
    net = tiny.TinyM3(config)
    net.load_state_dict(torch.load(os.path.join(args.work, "state.pt"))["model"])
    out = args.output
    os.makedirs(out, exist_ok=True)
    template = open(os.path.join(args.template_from, "config.json")).read()
    top = json.loads(template)
    top["text_config"] = config
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(top, f, indent=2)
        f.write("\n")
    tok = json.load(open(os.path.join(args.work, "tokenizer.json")))
    special = {a["content"]: a["id"] for a in tok["added_tokens"]}
    gen = {"bos_token_id": special["]~!b["], "eos_token_id": special["[e~["], "do_sample": True,
           "temperature": 1.0, "top_p": 0.95, "top_k": 40}
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump(gen, f, indent=2)
        f.write("\n")
    shutil.copy(os.path.join(args.work, "tokenizer.json"), os.path.join(out, "tokenizer.json"))
    tok_config = json.load(open(os.path.join(args.template_from, "tokenizer_config.json")))
    with open(os.path.join(REPO, "templates", "minimax_m3.jinja")) as f:
        tok_config["chat_template"] = f.read()
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(tok_config, f, indent=2, ensure_ascii=False)
        f.write("\n")
    tensors = net.hf_tensors()
    tiny.write_safetensors(os.path.join(out, "model.safetensors"), tensors)
    for stale in os.listdir(out):
        if stale.startswith("model-") or stale == "model.safetensors.index.json":
            os.remove(os.path.join(out, stale))
    count = sum(a.size for _, a in tensors.values())
    print(f"exported {len(tensors)} tensors, {count} parameters to {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("data")
    d.add_argument("--minimax", required=True)
    d.add_argument("--work", required=True)
    d.add_argument("--train", type=int, default=60000)
    t = sub.add_parser("train")
    t.add_argument("--work", required=True)
    t.add_argument("--steps", type=int, required=True)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--lr-steps", type=int, help="cosine horizon and sparse start (default --steps)")
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--budget", type=int, default=3072, help="padded tokens per batch")
    t.add_argument("--sparse-from", type=float, default=0.3, help="fraction of steps, dense before")
    t.add_argument("--threads", type=int, default=1, help="1: faster than 2 on a shared machine")
    t.add_argument("--log-every", type=int, default=25)
    e = sub.add_parser("export")
    e.add_argument("--work", required=True)
    e.add_argument("--output", required=True)
    e.add_argument("--template-from", required=True, help="a `minimax make-tiny --arch m3` dir")
    args = parser.parse_args()
    {"data": cmd_data, "train": cmd_train, "export": cmd_export}[args.cmd](args)


if __name__ == "__main__":
    main()
