#!/usr/bin/python3
"""Held-out accuracy of a tiny-model checkpoint through the engine: every problem is rendered with
the chat template (as the server would), generated greedily by `minimax generate`, and the raw
output compared with the expected assistant text of docs/tiny_model_tasks.md.

    evaluate.py --minimax BIN --model DIR [--per-task 30] [--json out.json]

Scores per task: `exact` = the whole generated text (reasoning block included) equals the expected
one; `content` = the text after `</mm:think>` equals the expected content. Needles are reported
per document length (S = 8, 32, 64 sentences). Held-out seeds (EVAL_SALT + i) never occur in
training (TRAIN_SALT + i, i < 2^40)."""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tasks  # noqa: E402

EVAL_SALT = 2 << 40


def generate(minimax, model, prompt, max_tokens=160):
    result = subprocess.run([minimax, "generate", "--model", model, "--prompt", prompt,
                             "--temperature", "0", "--max-tokens", str(max_tokens), "--threads",
                             "1", "--quiet"], capture_output=True, text=True, check=True)
    out = result.stdout
    return out[:-len(tasks.EOS)] if out.endswith(tasks.EOS) else out


def content_of(text):
    return text.split(tasks.THINK_END)[-1]


def problems(per_task):
    """(name, problem) pairs, deterministic."""
    out = []
    for t, name in enumerate(["arithmetic", "copy", "recall", "tool"]):
        for i in range(per_task):
            out.append((name, tasks.GENERATORS[name](tasks.Rng(EVAL_SALT + t * 100000 + i))))
    for S in (8, 32, 64):
        for i in range(per_task):
            rng = tasks.Rng(EVAL_SALT + 900000 + S * 1000 + i)
            out.append((f"needle S={S}", tasks.needle(rng, sentences=S)))
    return out


def turns(problem):
    """(prompt text, expected generated text) for each assistant turn of the problem."""
    messages, tools, kwargs, targets = tasks.conversation(problem)
    result = []
    user_turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    for turn, at in enumerate(user_turns):
        result.append((tasks.render_prompt(messages[:at], tools, kwargs), targets[turn]))
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minimax", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--per-task", type=int, default=30)
    parser.add_argument("--json")
    args = parser.parse_args()
    scores, failures = {}, []
    for name, problem in problems(args.per_task):
        exact = content = True
        for prompt, expected in turns(problem):
            got = generate(args.minimax, args.model, prompt)
            if got != expected:
                exact = False
                failures.append({"task": name, "expected": expected, "got": got})
            if content_of(got) != content_of(expected):
                content = False
        s = scores.setdefault(name, {"n": 0, "exact": 0, "content": 0})
        s["n"] += 1
        s["exact"] += exact
        s["content"] += content
        print(f"{name}: {'ok' if exact else 'WRONG'}", flush=True)
    for name, s in scores.items():
        print(f"{name:14s} exact {s['exact']}/{s['n']}  content {s['content']}/{s['n']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scores": scores, "failures": failures[:50]}, f, indent=1)


if __name__ == "__main__":
    main()
