#!/usr/bin/env python3
"""Writes the replay files of `minimax bench --replay` (docs/speculative.md).

Each line is {"prompt": TEXT, "output": TEXT}, raw text: what a coding assistant was asked and
what it answered. Three kinds, each in its own file under OUT_DIR:
  code_edit.jsonl   a source file of this repository shown whole, one function rewritten, the
                    whole file printed back (what coding CLIs do when they rewrite a file);
  tool_output.jsonl a tool's output (git log, grep, a test log) and an answer that quotes at least
                    1 KB of it;
  no_repeat.jsonl   at least 2 KB of prose that the prompt does not contain.
The texts come from this repository at the time the script runs; the script is deterministic for a
given checkout. Usage: scripts/make_replays.py OUT_DIR
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Five source files of 40-140 lines and the function rewritten in each (its first definition):
# short enough that a replay decodes in minutes on two cores.
CODE_EDITS = [
    ("src/runtime/stop_strings.cc", "StopStringMatcher::push"),
    ("src/base/mapped_file.cc", "touch_pages"),
    ("src/base/process_memory.cc", "resident_memory"),
    ("src/base/progress.cc", "Progress::draw"),
    ("src/base/thread_pool.cc", "ThreadPool::parallel_for"),
]


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def function_span(text, name):
    """Lines [begin, end) of the definition of `name`: its signature line to the closing brace
    at column 0."""
    lines = text.split("\n")
    pattern = re.compile(r"^[A-Za-z].*\b" + re.escape(name) + r"\(")
    for i, line in enumerate(lines):
        if pattern.match(line) and not line.rstrip().endswith(";"):
            for j in range(i, len(lines)):
                if lines[j] == "}":
                    return lines, i, j + 1
    raise SystemExit(f"make_replays: no definition of {name}")


def rewrite(lines, begin, end):
    """The function with its longest local name renamed and a comment added: a real edit that
    leaves most of the text as it was."""
    body = "\n".join(lines[begin:end])
    words = re.findall(r"\b[a-z][a-z_0-9]{2,}\b", body)
    keywords = {"const", "return", "for", "while", "static_cast", "auto", "int", "size_t",
                "int64_t", "int32_t", "double", "float", "bool", "void", "std", "break",
                "continue", "else", "true", "false", "nullptr", "min", "max", "size", "begin",
                "end", "this", "char", "uint64_t", "uint32_t", "span", "string"}
    candidates = sorted({w for w in words if w not in keywords and words.count(w) >= 2},
                        key=lambda w: (-words.count(w), w))
    old = candidates[0]
    new = old + "_value" if not old.endswith("_value") else old + "2"
    edited = re.sub(r"\b" + re.escape(old) + r"\b", new, body).split("\n")
    edited.insert(1, f"  // Rewritten: '{old}' is now '{new}', named for what it holds.")
    return old, new, lines[:begin] + edited + lines[end:]


def code_edit_cases():
    cases = []
    for path, name in CODE_EDITS:
        text = read(path)
        lines, begin, end = function_span(text, name)
        old, new, edited = rewrite(lines, begin, end)
        prompt = (f"Here is {path}:\n\n```cpp\n{text}```\n\nRewrite the function `{name}`: "
                  f"rename `{old}` to `{new}` and say why in a comment. Print the whole file "
                  f"back, unchanged everywhere else.\n")
        output = (f"Here is the whole of {path} with `{name}` rewritten:\n\n```cpp\n"
                  + "\n".join(edited) + "```\n")
        cases.append({"prompt": prompt, "output": output})
    return cases


def git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT, *args], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def quote_kb(text, start_marker, size=1200):
    start = max(text.find(start_marker), 0)
    end = text.find("\n", start + size)
    return text[start:end if end > 0 else len(text)]


def tool_output_cases():
    cases = []
    grep = subprocess.run(["grep", "-rn", "fail(", "src/runtime"], cwd=ROOT, capture_output=True,
                          text=True).stdout[:6000]
    docs = read("docs/engine.md")[:6000]
    log = git("log", "-n", "12", "--stat", "--format=commit %h%nAuthor: minimax%n%n    %s%n",
              "--", "src/runtime") or read("docs/runtime.md")[:6000]
    for tool, result, marker, ask in [
        ("grep -rn 'fail(' src/runtime", grep, "src/runtime/s", "Which errors name a parameter?"),
        ("cat docs/engine.md", docs, "#", "What does the engine do when blocks run out?"),
        ("git log --stat -- src/runtime", log, "commit", "What changed in src/runtime lately?"),
    ]:
        quoted = quote_kb(result, marker)
        prompt = (f"{ask}\n\n<tool_call>{tool}</tool_call>\n<tool_result>\n{result}\n"
                  f"</tool_result>\n")
        output = (f"The tool printed what we need. The relevant part, quoted as it is:\n\n```\n"
                  f"{quoted}\n```\n\nIn short: the lines above answer the question; everything "
                  f"else in the output is context for them.\n")
        cases.append({"prompt": prompt, "output": output})
    return cases


def no_repeat_cases():
    cases = []
    for path, question in [("docs/model.md", "Explain how the model computes a token."),
                           ("docs/parallel.md", "How does it run over several processes?")]:
        text = read(path)
        start = text.find("\n\n") + 2
        output = text[start:start + 2600]
        output = output[:output.rfind(" ")]
        cases.append({"prompt": f"{question} Answer in prose.\n", "output": output})
    return cases


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, cases in [("code_edit", code_edit_cases()), ("tool_output", tool_output_cases()),
                        ("no_repeat", no_repeat_cases())]:
        tmp = os.path.join(out, f".{name}.jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            for c in cases:
                f.write(json.dumps(c) + "\n")
        os.replace(tmp, os.path.join(out, f"{name}.jsonl"))
        print(f"{name}.jsonl: {len(cases)} cases, "
              f"{sum(len(c['output']) for c in cases)} bytes of output")


if __name__ == "__main__":
    main()
