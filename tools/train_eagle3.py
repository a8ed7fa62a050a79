#!/usr/bin/python3
"""Trains an EAGLE-3 draft head for the bundled tiny model on its own greedy outputs, and writes it
in the published layout (docs/eagle3.md) that `--speculative-config '{"method": "eagle3"}'` loads.

    train_eagle3.py --minimax build/minimax --model models/minimax-m3-tiny \
        --output models/minimax-m3-tiny-eagle3 [--per-task 50] [--steps 1500] [--seed 1]

Data: task problems of tools/tiny_model/tasks.py from seeds HEAD_SALT + i (disjoint from the tiny
model's training seeds and from the held-out seeds evaluate.py and `--measure` use), each turn
rendered with the chat template and completed greedily by `minimax generate`; `minimax logits
--taps` then gives, for the whole text, the target's next-token choice at every position and the
hidden states entering the tapped layers. The head is trained with EAGLE-3's training-time test:
step 0 reads the target's taps, steps 1..TTT-1 read the head's own previous output (as the chained
drafts do at run time) and attend to the step-0 rows before them plus their own chain.

--measure: instead, the mean accepted length of the head at K = 4 on held-out problems (seeds
EVAL_SALT + i, as evaluate.py) through `minimax generate --speculative-config`, and the decode
speed against the plain run (alternating per prompt), checking that the texts are equal.

Needs Debian's python3-torch (`scripts/setup.sh --training` installs it). Debian's torch multiplies with the reference BLAS
(about 0.5 GFLOP/s); with libopenblas0-pthread installed the script runs itself with OpenBLAS
through LD_LIBRARY_PATH (about ten times faster) without changing the system's BLAS choice."""

import argparse
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
if os.path.isdir(OPENBLAS) and OPENBLAS not in os.environ.get("LD_LIBRARY_PATH", ""):
    os.environ["LD_LIBRARY_PATH"] = OPENBLAS + ":" + os.environ.get("LD_LIBRARY_PATH", "")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.execv(sys.executable, [sys.executable] + sys.argv)

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny_model"))
import tasks  # noqa: E402

HEAD_SALT = 3 << 40  # the tiny model trained on 1 << 40 + i, evaluate.py holds out 2 << 40 + i
EVAL_SALT = 2 << 40
TASKS = ["arithmetic", "copy", "recall", "tool"]
TTT = 3  # training-time-test steps


def problems(salt, per_task):
    out = []
    for t, name in enumerate(TASKS):
        for i in range(per_task):
            out.append(tasks.GENERATORS[name](tasks.Rng(salt + t * 100000 + i)))
    return out


def prompts(salt, per_task):
    """The rendered prompt of every assistant turn of the problems."""
    out = []
    for problem in problems(salt, per_task):
        messages, tools, kwargs, _ = tasks.conversation(problem)
        for at, m in enumerate(messages):
            if m["role"] == "assistant":
                out.append(tasks.render_prompt(messages[:at], tools, kwargs))
    return out


def generate(args, prompt, extra=()):
    result = subprocess.run([args.minimax, "generate", "--model", args.model, "--prompt", prompt,
                             "--temperature", "0", "--max-tokens", "160", "--threads", "1",
                             *extra], capture_output=True, text=True, check=True)
    return result.stdout, result.stderr


def encode(args, texts):
    result = subprocess.run([args.minimax, "tokenizer", "encode", "--tokenizer",
                             os.path.join(args.model, "tokenizer.json")],
                            input="".join(json.dumps(t) + "\n" for t in texts),
                            capture_output=True, text=True, check=True)
    return [json.loads(line) for line in result.stdout.splitlines()]


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = np.frombuffer(data[begin:end], dtype={"BF16": np.int16, "F32": np.float32,
                                                    "I64": np.int64, "BOOL": np.uint8}[info["dtype"]])
        t = torch.from_numpy(raw.copy())
        if info["dtype"] == "BF16":
            t = t.view(torch.bfloat16).float()
        out[name] = t.reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        if t.dtype == torch.float32:
            raw, dtype = t.to(torch.bfloat16).view(torch.int16).numpy().tobytes(), "BF16"
        elif t.dtype == torch.int64:
            raw, dtype = t.numpy().tobytes(), "I64"
        else:
            raw, dtype = t.to(torch.uint8).numpy().tobytes(), "BOOL"
        header[name] = {"dtype": dtype, "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path + ".partial", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    os.replace(path + ".partial", path)


def collect(args, taps):
    """(tokens, taps [n, 3H], target choice [n]) per training text."""
    texts = [p + generate(args, p)[0] for p in prompts(HEAD_SALT, args.per_task)]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for ids in encode(args, texts):
            logits_path, taps_path = os.path.join(tmp, "l.npy"), os.path.join(tmp, "t.npy")
            subprocess.run([args.minimax, "logits", "--model", args.model, "--tokens",
                            ",".join(map(str, ids)), "--all-positions", "--output", logits_path,
                            "--taps", ",".join(map(str, taps)), "--taps-output", taps_path,
                            "--threads", "1", "--quiet"], check=True, capture_output=True)
            choice = np.load(logits_path).argmax(-1)
            out.append((torch.tensor(ids), torch.from_numpy(np.load(taps_path)),
                        torch.from_numpy(choice)))
    return out


def rms(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, positions, theta):
    d = x.shape[-1]
    inv = theta ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)
    angle = positions[:, None].float() * inv[None, :]
    cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
    a, b = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([a * cos - b * sin, b * cos + a * sin], -1)


class Head(torch.nn.Module):
    def __init__(self, H, I, heads, kv_heads, head_dim, vocab, theta):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.theta = heads, kv_heads, head_dim, theta
        lin = lambda o, i: torch.nn.Parameter(torch.randn(o, i) / math.sqrt(i))  # noqa: E731
        self.w = {
            "fc.weight": lin(H, 3 * H),
            "midlayer.self_attn.q_proj.weight": lin(heads * head_dim, 2 * H),
            "midlayer.self_attn.k_proj.weight": lin(kv_heads * head_dim, 2 * H),
            "midlayer.self_attn.v_proj.weight": lin(kv_heads * head_dim, 2 * H),
            "midlayer.self_attn.o_proj.weight": lin(H, heads * head_dim),
            "midlayer.mlp.gate_proj.weight": lin(I, H),
            "midlayer.mlp.up_proj.weight": lin(I, H),
            "midlayer.mlp.down_proj.weight": lin(H, I),
            "lm_head.weight": lin(vocab, H),
        }
        self.n = {k: torch.nn.Parameter(torch.ones(H)) for k in (
            "midlayer.input_layernorm.weight", "midlayer.hidden_norm.weight",
            "midlayer.post_attention_layernorm.weight", "norm.weight")}
        # Registered under the published names with "." spelled "_" (torch refuses dots).
        for name, p in {**self.w, **self.n}.items():
            self.register_parameter(name.replace(".", "_"), p)

    def qkv(self, embedded, s, positions):
        w, n = self.w, self.n
        both = torch.cat([rms(embedded, n["midlayer.input_layernorm.weight"]),
                          rms(s, n["midlayer.hidden_norm.weight"])], -1)
        T, hd = both.shape[0], self.head_dim
        q = rope((both @ w["midlayer.self_attn.q_proj.weight"].T).view(T, self.heads, hd),
                 positions, self.theta)
        k = rope((both @ w["midlayer.self_attn.k_proj.weight"].T).view(T, self.kv_heads, hd),
                 positions, self.theta)
        v = (both @ w["midlayer.self_attn.v_proj.weight"].T).view(T, self.kv_heads, hd)
        group = self.heads // self.kv_heads
        return q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)

    def rest(self, s, attended):
        w, n = self.w, self.n
        res = s + attended.reshape(s.shape[0], -1) @ w["midlayer.self_attn.o_proj.weight"].T
        m = rms(res, n["midlayer.post_attention_layernorm.weight"])
        res = res + (torch.nn.functional.silu(m @ w["midlayer.mlp.gate_proj.weight"].T) *
                     (m @ w["midlayer.mlp.up_proj.weight"].T)) @ w["midlayer.mlp.down_proj.weight"].T
        return res, rms(res, n["norm.weight"]) @ w["lm_head.weight"].T

    def forward(self, embed, tokens, taps, choice):
        """Mean cross-entropy over the TTT steps. Step j's row anchored at p sits at position
        p + j, reads token p + 1 + j and predicts the target's choice after it."""
        n = tokens.shape[0]
        s = taps @ self.w["fc.weight"].T
        losses, keys, values = [], [], []
        scale = 1 / math.sqrt(self.head_dim)
        for j in range(TTT):
            rows = n - 1 - j  # anchors p = 0 .. rows - 1
            if rows <= 1:
                break
            s = s[:rows]
            positions = torch.arange(rows) + j
            q, k, v = self.qkv(embed[tokens[1 + j: 1 + j + rows]], s, positions)
            keys.append(k)
            values.append(v)
            # Step-0 rows up to the anchor (causal), then this anchor's own chain rows.
            k0, v0 = keys[0][:rows], values[0][:rows]
            scores0 = torch.einsum("thd,shd->hts", q, k0) * scale
            mask = torch.ones(rows, rows, dtype=torch.bool).tril()
            scores0 = scores0.masked_fill(~mask, float("-inf"))
            chain = [torch.einsum("thd,thd->ht", q, keys[i][:rows]) * scale for i in range(1, j + 1)]
            scores = torch.cat([scores0] + [c[..., None] for c in chain], -1)
            p = torch.softmax(scores, -1)
            attended = torch.einsum("hts,shd->thd", p[..., :rows], v0)
            for i in range(1, j + 1):
                attended = attended + p[..., rows + i - 1].T[..., None] * values[i][:rows]
            s, logits = self.rest(s, attended)
            target = choice[1 + j: 1 + j + rows]
            losses.append(torch.nn.functional.cross_entropy(logits, target))
        return sum(losses) / len(losses)


def train(args):
    config = json.load(open(os.path.join(args.model, "config.json")))
    text = config.get("text_config", config)
    L, H = text["num_hidden_layers"], text["hidden_size"]
    heads, kv_heads, head_dim = (text["num_attention_heads"], text["num_key_value_heads"],
                                 text["head_dim"])
    vocab, theta = text["vocab_size"], float(text.get("rope_theta", 10000))
    taps = [2, L // 2, L - 3]
    I = (H * 8 // 3 + 63) // 64 * 64
    torch.manual_seed(args.seed)
    data = collect(args, taps)
    print(f"{len(data)} texts, {sum(len(d[0]) for d in data)} tokens", file=sys.stderr)
    weights = read_safetensors(os.path.join(args.model, "model.safetensors"))
    embed = next(v for k, v in weights.items() if k.endswith("embed_tokens.weight"))
    head = Head(H, I, heads, kv_heads, head_dim, vocab, theta)
    opt = torch.optim.AdamW(head.parameters(), lr=args.lr, weight_decay=0.0)
    for step in range(args.steps):
        lr = args.lr * min(1.0, (step + 1) / 100) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        tokens, tap, choice = data[step % len(data)]
        loss = head(embed, tokens, tap, choice)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 200 == 0:
            print(f"step {step} loss {loss.item():.3f}", file=sys.stderr)
    out = args.output
    os.makedirs(out + ".partial", exist_ok=True)
    tensors = {k: v.detach().float() for k, v in {**head.w, **head.n}.items()}
    tensors["d2t"] = torch.zeros(vocab, dtype=torch.int64)
    tensors["t2d"] = torch.ones(vocab, dtype=torch.uint8)
    write_safetensors(os.path.join(out + ".partial", "model.safetensors"), tensors)
    head_config = {
        "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_act": "silu",
        "hidden_size": H, "intermediate_size": I, "num_hidden_layers": 1,
        "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim,
        "rms_norm_eps": 1e-6, "rope_theta": theta, "vocab_size": vocab,
        "draft_vocab_size": vocab, "target_hidden_size": H, "torch_dtype": "bfloat16",
        "eagle_config": {"eagle_aux_hidden_state_layer_ids": taps, "use_aux_hidden_state": True},
    }
    with open(os.path.join(out + ".partial", "config.json"), "w") as f:
        json.dump(head_config, f, indent=2)
        f.write("\n")
    if os.path.exists(out):
        raise SystemExit(f"{out} exists; remove it first")
    os.replace(out + ".partial", out)
    print(f"wrote {out}", file=sys.stderr)


def measure(args):
    """Mean accepted length at K = 4 on held-out problems, and decode speed against the plain
    batch-invariant run, alternating per prompt (decode time includes the head catching up over
    the prompt); the texts must be equal."""
    spec = json.dumps({"method": "eagle3", "model": args.output, "num_speculative_tokens": 4,
                       "adaptive": False})
    steps = accepted = tokens = 0
    seconds = {"plain": 0.0, "eagle3": 0.0}
    same = True
    decode = re.compile(r"decode: (\d+) tokens in ([\d.]+) s")
    for prompt in prompts(EVAL_SALT, args.per_task):
        plain_text, plain_err = generate(args, prompt, ["--batch-invariant"])
        text, err = generate(args, prompt, ["--speculative-config", spec])
        same &= text == plain_text
        m = re.search(r"(\d+) verify steps with drafts, (\d+) of (\d+) draft tokens accepted", err)
        steps += int(m.group(1))
        accepted += int(m.group(2))
        tokens += int(decode.search(plain_err).group(1))
        seconds["plain"] += float(decode.search(plain_err).group(2))
        seconds["eagle3"] += float(decode.search(err).group(2))
    print(json.dumps({"verify_steps": steps, "accepted_tokens": accepted,
                      "mean_accepted_length": round(1 + accepted / max(steps, 1), 3),
                      "decode_tokens": tokens,
                      "plain_decode_tok_s": round(tokens / seconds["plain"], 1),
                      "eagle3_decode_tok_s": round(tokens / seconds["eagle3"], 1),
                      "speedup": round(seconds["plain"] / seconds["eagle3"], 3),
                      "texts_equal": same}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minimax", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--per-task", type=int, default=50)
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--measure", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    (measure if args.measure else train)(args)


if __name__ == "__main__":
    main()
