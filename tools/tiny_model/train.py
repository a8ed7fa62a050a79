#!/usr/bin/python3
"""Trains the tiny MiniMax-M3 model on the synthetic tasks (docs/tiny_model_tasks.md).

    train.py data  --minimax BIN --work DIR [--train N]     # tokenizer, train.npz, heldout.npz
    train.py train --work DIR (--steps S | --time-budget SEC) [--out DIR]  # resumable (OUT/state.pt)
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
import evaluate  # noqa: E402
from data_io import (encode_lines, load_checkpoint, load_packed, save_packed,  # noqa: E402
                     save_weights, tokenize_problems)
import model as tiny  # noqa: E402
import tasks  # noqa: E402

TRAIN_SALT = 1 << 40  # training problems use seeds TRAIN_SALT + i; held-out ones other seeds
VOCAB = 1024          # BPE tokens before the special tokens
PADDED_VOCAB = 1088   # embedding rows (multiple of 64)
REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def cmd_data(args):
    os.makedirs(args.work, exist_ok=True)
    tokenizer = os.path.join(args.work, "tokenizer.json")
    if args.tokenizer:
        shutil.copy(args.tokenizer, tokenizer)
    else:
        corpus = os.path.join(args.work, "corpus.jsonl")
        with open(corpus, "w") as f:
            for i in range(2000):
                text = "".join(t for t, _ in tasks.render(tasks.sample(TRAIN_SALT + 10**9 + i)))
                f.write(json.dumps(re.sub(r"[0-9]", "", text)) + "\n")
        subprocess.run([args.minimax, "tokenizer", "train", "--corpus", corpus, "--vocab-size",
                        str(VOCAB), "--output", tokenizer], check=True)
    tok = json.load(open(tokenizer))
    begin = {a["content"]: a["id"] for a in tok["added_tokens"]}["]~b]"]
    t0 = time.time()
    problems = [tasks.sample(TRAIN_SALT + i) for i in range(args.train)]
    tokens, targets = tokenize_problems(args.minimax, tokenizer, problems)
    # The concatenation of segments must equal the encoding of the whole text (checked on some).
    whole = encode_lines(args.minimax, tokenizer, [
        "".join(t for t, _ in tasks.render(problems[i])) for i in range(50)])
    assert all(w == tokens[i] for i, w in enumerate(whole)), "segment encoding differs"
    lengths = np.array([len(t) for t in tokens])
    print(f"{args.train} conversations in {time.time() - t0:.0f}s; tokens: total "
          f"{lengths.sum()}, mean {lengths.mean():.0f}, max {lengths.max()}", flush=True)
    save_packed(os.path.join(args.work, "train.npz"), tokens, targets,
                [p["task"] for p in problems], begin)
    # Held-out: exactly the problems evaluate.py runs through the engine.
    held = evaluate.problems(args.heldout)
    tokens, targets = tokenize_problems(args.minimax, tokenizer, [p for _, p in held])
    save_packed(os.path.join(args.work, "heldout.npz"), tokens, targets, [n for n, _ in held],
                begin)


def length_batches(data, order, budget):
    """Cuts `order` (sorted by header group, then length) into batches of one header group and
    at most `budget` padded tokens (rows x longest row)."""
    out, batch, longest = [], [], 0
    for i in order:
        size = len(data["tokens"][i])
        if batch and (data["group"][i] != data["group"][batch[0]] or
                      max(longest, size) * (len(batch) + 1) > budget):
            out.append(batch)
            batch, longest = [], 0
        batch.append(i)
        longest = max(longest, size)
    if batch:
        out.append(batch)
    return out


def by_group_and_length(data, indices):
    return sorted(indices, key=lambda i: (data["group"][i], len(data["tokens"][i])))


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
            out += length_batches(data, by_group_and_length(data, order[start:start + 4096]),
                                  budget)
        rng.shuffle(out)
        for batch in out:
            yield epoch, batch
        epoch += 1


def collate(data, batch):
    T = max(len(data["tokens"][i]) for i in batch)
    tokens = torch.zeros(len(batch), T, dtype=torch.long)
    mask = torch.zeros(len(batch), T, dtype=torch.bool)
    for row, i in enumerate(batch):
        t = torch.from_numpy(data["tokens"][i])
        tokens[row, :len(t)] = t
        mask[row, :len(t)] = torch.from_numpy(data["targets"][i])
    return tokens, mask


def lr_at(step, steps, peak):
    warmup = 50
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


@torch.no_grad()
def heldout_scores(net, data, device, budget):
    """Per task: (exact, n, token accuracy) under teacher forcing on the assistant tokens. A
    conversation is exact when every assistant token is the argmax, which is exactly when greedy
    decoding reproduces it (what evaluate.py measures through the engine)."""
    net.eval()
    exact, total, right, count = {}, {}, {}, {}
    order = by_group_and_length(data, range(len(data["tokens"])))
    for batch in length_batches(data, order, budget):
        tokens, mask = collate(data, batch)
        tokens, mask = tokens.to(device), mask.to(device)
        target_mask = mask[:, 1:]
        logits, _ = net(tokens[:, :-1], True, data["prefixes"][data["group"][batch[0]]].to(
            device), only=target_mask)
        good = logits.argmax(-1) == tokens[:, 1:][target_mask]
        rows = torch.nonzero(target_mask)[:, 0]
        wrong = torch.zeros(len(batch), device=device).index_add_(0, rows, (~good).float())
        targets = target_mask.sum(1).tolist()
        for j, wrong_j, targets_j in zip(batch, wrong.tolist(), targets):
            kind = data["kinds"][j]
            total[kind] = total.get(kind, 0) + 1
            exact[kind] = exact.get(kind, 0) + int(wrong_j == 0)
            right[kind] = right.get(kind, 0) + targets_j - int(wrong_j)
            count[kind] = count.get(kind, 0) + targets_j
    net.train()
    return {k: (exact[k], total[k], right[k] / count[k]) for k in sorted(total)}


def shape_of(args, state):
    if state is not None and "shape" in state:
        return state["shape"]
    return {"hidden": args.hidden, "layers": args.layers, "heads": args.heads}


def cmd_train(args):
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 as on the CPU: same function
    torch.manual_seed(args.seed)
    data = load_packed(os.path.join(args.work, "train.npz"))
    if args.tasks:  # a curriculum stage: some tasks only, NAME:K repeats that task K times,
        # NAME:K:MAX keeps only its conversations of at most MAX tokens (short needles first)
        weight, longest = {}, {}
        for spec in args.tasks.split(","):
            name, k, most = (spec.split(":") + ["", ""])[:3]
            weight[name], longest[name] = int(k or 1), int(most or 10 ** 9)
        keep = [i for i, k in enumerate(data["kinds"])
                if len(data["tokens"][i]) <= longest.get(k, 0) for _ in range(weight.get(k, 0))]
        for key in ("tokens", "targets", "group", "kinds"):
            data[key] = [data[key][i] for i in keep]
    heldout_path = os.path.join(args.work, "heldout.npz")
    heldout = load_packed(heldout_path) if os.path.exists(heldout_path) else None
    out = args.out or args.work
    os.makedirs(out, exist_ok=True)
    state_path = os.path.join(out, "state.pt")
    state = torch.load(state_path, map_location="cpu") if os.path.exists(state_path) else None
    shape = shape_of(args, state)
    config = tiny.text_config(PADDED_VOCAB, **shape)
    net = tiny.TinyM3(config).to(device)
    decay = [p for n, p in net.named_parameters() if p.dim() == 2]
    rest = [p for n, p in net.named_parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                             {"params": rest, "weight_decay": 0.0}], lr=args.lr,
                            betas=(0.9, 0.95))
    step, elapsed = 0, 0.0
    steps, lr_steps = args.steps, args.lr_steps or args.steps
    if state is None and args.init:  # a new stage starting from earlier weights
        weights, info = load_checkpoint(args.init)
        assert info["shape"] == shape, f"{args.init} has shape {info['shape']}, not {shape}"
        net.load_state_dict(weights)
        print(f"initialised from {args.init} (step {info['step']})", flush=True)
    if state is not None:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, elapsed = state["step"], state["elapsed"]
        if not args.steps:
            steps = lr_steps = state["steps"]
        print(f"resumed at step {step}", flush=True)
    print(f"device {device}, shape {shape}, parameters "
          f"{sum(p.numel() for p in net.parameters())}, conversations {len(data['tokens'])}",
          flush=True)
    stream = batches(data, args.budget, args.seed)
    for _ in range(step):  # replay the batch order up to the resumed step
        next(stream)
    start = time.time() - elapsed

    def save():
        torch.save({"model": net.state_dict(), "opt": opt.state_dict(), "step": step,
                    "steps": steps, "elapsed": time.time() - start, "shape": shape,
                    "args": vars(args)}, state_path + ".tmp")
        os.replace(state_path + ".tmp", state_path)
        if args.export_model:  # weights only, small enough to bring back from another machine
            save_weights(args.export_model, net, {"step": step, "steps": steps, "shape": shape})

    def evaluate_now():
        if heldout is None:
            return
        t0 = time.time()
        scores = heldout_scores(net, heldout, device, args.budget)
        print(f"heldout step {step} " + " ".join(
            f"{k.replace(' ', '')} {e}/{n} ({a:.3f})" for k, (e, n, a) in scores.items()) +
            f" [{time.time() - t0:.1f}s]", flush=True)

    # With --time-budget the step count is fixed after a short calibration, so that the cosine
    # schedule ends inside the budget; the log states it, and --steps N reproduces the run.
    calibrate = args.calibrate if not steps else 0
    log_tokens, log_start, losses, last_save, last_eval = 0, time.time(), [], time.time(), 0
    while not steps or step < steps:
        if calibrate and step == calibrate // 3:
            warm = time.time()  # the first steps include the device's start-up
        if calibrate and step == calibrate:
            per_step = (time.time() - warm) / (calibrate - calibrate // 3)
            left = args.time_budget - (time.time() - start)
            steps = lr_steps = step + int(left / (per_step * (1 + args.eval_share)))
            print(f"calibrated: {per_step * 1000:.1f} ms/step -> {steps} steps", flush=True)
        epoch, batch = next(stream)
        tokens, mask = collate(data, batch)
        tokens, mask = tokens.to(device, non_blocking=True), mask.to(device, non_blocking=True)
        use_sparse = step >= int(lr_steps * args.sparse_from) if steps else False
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lr_steps or 10 ** 9, args.lr)  # flat until calibrated
        prefix = data["prefixes"][data["group"][batch[0]]].to(device)
        target_mask = mask[:, 1:]
        logits, index_loss = net(tokens[:, :-1], use_sparse, prefix, only=target_mask,
                                 prefix_grad=args.prefix_grad)
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
        losses.append(torch.stack([lm.detach(), index_loss.detach() if index_loss is not None
                                   else torch.zeros((), device=device)]))
        now = time.time()
        if step % args.log_every == 0 or step == steps:
            lm_avg, il_avg = torch.stack(losses).mean(0).tolist()
            print(f"step {step}/{steps} epoch {epoch} lm {lm_avg:.4f} index {il_avg:.4f} "
                  f"sparse {int(use_sparse)} lr {lr_at(step, lr_steps or 10 ** 9, args.lr):.2e} "
                  f"{log_tokens / (now - log_start):.0f} tok/s elapsed {now - start:.0f}s",
                  flush=True)
            log_tokens, log_start, losses = 0, now, []
        if steps and (step - last_eval >= max(1, steps // args.evals) or step == steps):
            evaluate_now()
            last_eval = step
        if now - last_save >= args.save_every or step == steps:
            save()
            last_save = time.time()
        if args.time_budget and now - start > args.time_budget * 1.1:
            print(f"stopped at step {step}: past the time budget", flush=True)
            save()
            break


def cmd_export(args):
    path = args.state or os.path.join(args.work, "state.pt")
    weights, info = load_checkpoint(path)
    config = tiny.text_config(PADDED_VOCAB, **info.get("shape", {}))
    net = tiny.TinyM3(config)
    net.load_state_dict(weights)
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
    d.add_argument("--tokenizer", help="reuse this tokenizer.json instead of training one")
    d.add_argument("--heldout", type=int, default=30, help="held-out problems per task")
    t = sub.add_parser("train")
    t.add_argument("--work", required=True, help="holds train.npz (and heldout.npz)")
    t.add_argument("--out", help="where state.pt goes (default --work)")
    t.add_argument("--steps", type=int, help="total steps (or --time-budget)")
    t.add_argument("--time-budget", type=float, help="seconds: choose --steps to fit them")
    t.add_argument("--calibrate", type=int, default=60, help="steps timed for --time-budget")
    t.add_argument("--eval-share", type=float, default=0.15,
                   help="time kept for evaluation and slack")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--tasks", help="train on these tasks only: NAME[:REPEATS[:MAX_TOKENS]],...")
    t.add_argument("--init", help="start from these weights (an --export-model .npz or a state.pt)")
    t.add_argument("--lr-steps", type=int, help="cosine horizon and sparse start (default --steps)")
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--budget", type=int, default=3072, help="padded tokens per batch")
    t.add_argument("--sparse-from", type=float, default=0.3, help="fraction of steps, dense before")
    t.add_argument("--prefix-grad", action="store_true", help="train through the header too")
    t.add_argument("--hidden", type=int, default=128)
    t.add_argument("--layers", type=int, default=4)
    t.add_argument("--heads", type=int, default=4)
    t.add_argument("--device", help="cpu or cuda (default: cuda when there is one)")
    t.add_argument("--threads", type=int, default=1, help="1: faster than 2 on a shared machine")
    t.add_argument("--log-every", type=int, default=25)
    t.add_argument("--evals", type=int, default=10, help="held-out evaluations per run")
    t.add_argument("--save-every", type=float, default=60.0, help="seconds between saves")
    t.add_argument("--export-model", help="also save the weights alone here at each save")
    e = sub.add_parser("export")
    e.add_argument("--work", required=True)
    e.add_argument("--state", help="a state.pt or an --export-model .npz (default WORK/state.pt)")
    e.add_argument("--output", required=True)
    e.add_argument("--template-from", required=True, help="a `minimax make-tiny --arch m3` dir")
    args = parser.parse_args()
    {"data": cmd_data, "train": cmd_train, "export": cmd_export}[args.cmd](args)


if __name__ == "__main__":
    main()
