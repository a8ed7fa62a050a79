#!/usr/bin/env bash
# End to end: generate, chat and bench on tiny M2 (bf16) and M3 (fp8-channel) checkpoints. Greedy
# runs repeat byte for byte, a seed repeats a sampled run, --chat renders the template, a stop
# string cuts the text before it, chat labels reasoning and keeps the conversation (and on the
# bundled trained model shows its reasoning apart from the answer), bench prints consistent fields
# (no timing is asserted), every --kv-cache-dtype and --activations value runs (bench and the sweep
# report the precision, MINIMAX_CPU_ACTIVATIONS deciding when the flag is absent), bench --depth
# reports each depth, bench --sweep writes every cell (JSON, CSV, SVG) and --compare reads them
# back. Bad flags fail with the parameter named.
# Usage: generate_tiny.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
work=$2
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check
rm -rf "$work"
mkdir -p "$work"
"$bin" make-tiny --arch m2 --output "$work/m2" >/dev/null 2>&1
"$bin" make-tiny --arch m3 --format fp8-channel --output "$work/m3" >/dev/null 2>&1

for arch in m2 m3; do
  model="$work/$arch"
  gen() { "$bin" generate --model "$model" --threads 1 "$@"; }

  # Greedy twice: identical text; the timing line names both speeds and the finish reason.
  gen --prompt "The quick brown fox" --max-tokens 24 --temperature 0 >"$work/$arch.a" 2>"$work/$arch.a.err"
  gen --prompt "The quick brown fox" --max-tokens 24 --temperature 0 >"$work/$arch.b" 2>/dev/null
  cmp -s "$work/$arch.a" "$work/$arch.b" || fail "$arch: greedy runs differ"
  [[ -s "$work/$arch.a" ]] || fail "$arch: no text generated"
  grep -q "prompt: [0-9]* tokens" "$work/$arch.a.err" || fail "$arch: no prompt stats"
  grep -q "tok/s | finish: \(length\|stop\)" "$work/$arch.a.err" ||
    fail "$arch: no decode stats: $(cat "$work/$arch.a.err")"

  # Sampling with a seed repeats.
  gen --prompt "What is 12 + 35?" --max-tokens 16 --temperature 1 --top-p 0.9 --seed 5 >"$work/$arch.s1" 2>/dev/null
  gen --prompt "What is 12 + 35?" --max-tokens 16 --temperature 1 --top-p 0.9 --seed 5 >"$work/$arch.s2" 2>/dev/null
  cmp -s "$work/$arch.s1" "$work/$arch.s2" || fail "$arch: seed 5 not reproducible"

  # --chat: the template is rendered (a longer prompt than the bare text) and greedy repeats.
  gen --chat --system "Be brief." --prompt "Hello" --max-tokens 16 --temperature 0 >"$work/$arch.c1" 2>"$work/$arch.c1.err"
  gen --chat --system "Be brief." --prompt "Hello" --max-tokens 16 --temperature 0 >"$work/$arch.c2" 2>/dev/null
  cmp -s "$work/$arch.c1" "$work/$arch.c2" || fail "$arch: --chat greedy runs differ"
  chat_prompt=$(sed -n 's/.*prompt: \([0-9]*\) tokens.*/\1/p' "$work/$arch.c1.err")
  ((chat_prompt > 20)) || fail "$arch: --chat prompt of $chat_prompt tokens, template not applied?"

  # A stop string taken from the greedy text: the output is the text before its first occurrence.
  stop=$(python3 - "$work/$arch.a" <<'PY'
import sys
text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
# A 2-character piece from the middle, without U+FFFD or control characters.
for i in range(len(text) // 2, len(text) - 1):
    piece = text[i:i + 2]
    if all(c.isprintable() and c != "\ufffd" for c in piece):
        print(piece)
        break
PY
  )
  if [[ -n "$stop" ]]; then
    gen --prompt "The quick brown fox" --max-tokens 24 --temperature 0 --stop "$stop" >"$work/$arch.stop" 2>"$work/$arch.stop.err"
    python3 - "$work/$arch.a" "$work/$arch.stop" "$stop" <<'PY' || fail "$arch: --stop '$stop' output wrong"
import sys
full = open(sys.argv[1], "rb").read()
cut = open(sys.argv[2], "rb").read()
stop = sys.argv[3].encode()
sys.exit(0 if cut == full[: full.index(stop)] else 1)
PY
    grep -q "finish: stop (stop string" "$work/$arch.stop.err" || fail "$arch: stop not reported"
  fi

  # chat: two turns, a reset, one more; reasoning and answer labelled when not on a terminal.
  printf 'What is 12 + 35?\nAnd 128 * 4?\n/reset\nHello\n' |
    "$bin" chat --model "$model" --threads 1 --max-tokens 12 --temperature 0 \
      >"$work/$arch.chat" 2>"$work/$arch.chat.err"
  grep -q '^\[reasoning\]$\|^\[answer\]$' "$work/$arch.chat" || fail "$arch: chat output unlabelled"
  turns=$(grep -c "tokens, .* tok/s" "$work/$arch.chat.err")
  [[ $turns -eq 3 ]] || fail "$arch: $turns chat turns reported, want 3"
  grep -q "conversation cleared" "$work/$arch.chat.err" || fail "$arch: /reset not acknowledged"
  # The second turn reuses the cached prefix of the first.
  sed -n '2p' <(grep "tok/s" "$work/$arch.chat.err") | grep -qv " 0 prompt tokens reused" ||
    fail "$arch: second turn recomputed the whole conversation"

  # bench: fields present and consistent with each other.
  "$bin" bench --model "$model" --threads 1 --prompt-tokens 16 --gen-tokens 4 --repeat 1 \
    --bandwidth-mib 64 --depth 100 --depth 700 --kv-cache-dtype fp8_e4m3 --activations bf16 \
    --json >"$work/$arch.bench.json" 2>/dev/null
  python3 - "$work/$arch.bench.json" <<'PY' || fail "$arch: bench fields wrong: $(cat "$work/$arch.bench.json")"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["copy_gbps"] > 0 and b["read_gbps"] > 0, "bandwidth"
assert b["prefill_tok_s"] > 0 and b["decode_tok_s"] > 0, "speed"
parts = b["bytes_per_token"]
assert parts["total"] == sum(v for k, v in parts.items() if k != "total"), "byte sum"
assert parts["routed_experts"] > 0 and parts["lm_head"] > 0 and parts["attention"] > 0, "parts"
achieved = parts["total"] * b["decode_tok_s"] / 1e9
assert abs(b["achieved_gbps"] - achieved) <= 1e-9 * max(1.0, achieved), "achieved"
assert abs(b["ratio_to_copy"] - achieved / b["copy_gbps"]) < 1e-9, "ratio"
assert b["threads"] == 1 and b["prompt_tokens"] == 16 and b["gen_tokens"] == 4, "echo"
assert b["kv_cache_dtype"] == "fp8_e4m3", "kv type"
assert b["activations"] == "bf16", "activations"
assert [d["depth"] for d in b["depth"]] == [100, 700], "depths"
assert all(d["decode_tok_s"] > 0 and d["fill"] == "tile" for d in b["depth"]), "depth speeds"
assert b["depth"][0]["ratio_to_first"] == 1.0, "depth ratio"
PY
  # --prefill-chunk: echoed, lm_head counted once per chunk (16 tokens in chunks of 5: 4 calls),
  # and a chunk of 0 is refused naming the flag.
  "$bin" bench --model "$model" --threads 1 --prompt-tokens 16 --prefill-chunk 5 --gen-tokens 2 \
    --repeat 1 --bandwidth-mib 16 --json >"$work/$arch.chunk.json" 2>/dev/null
  python3 - "$work/$arch.chunk.json" <<'PY' || fail "$arch: bench --prefill-chunk wrong: $(cat "$work/$arch.chunk.json")"
import json, sys
b = json.load(open(sys.argv[1]))
assert b["prefill_chunk"] == 5, "echo"
expected = 2.0 * (b["prefill_weights_per_token"] * 16 + b["prefill_lm_head_weights"] * 4) / 1e9
assert abs(b["prefill_gflop"] - expected) <= 1e-12 * expected, (b["prefill_gflop"], expected)
PY
  if "$bin" bench --model "$model" --prefill-chunk 0 >/dev/null 2>"$work/$arch.chunk0.err"; then
    fail "$arch: bench accepted --prefill-chunk 0"
  fi
  grep -q -- "--prefill-chunk" "$work/$arch.chunk0.err" ||
    fail "$arch: --prefill-chunk 0 error does not name the flag: $(cat "$work/$arch.chunk0.err")"
  # Every KV cache type generates; greedy f32 is repeatable like the default.
  for kv in f32 bf16 fp8_e4m3; do
    gen --prompt "The quick brown fox" --max-tokens 8 --temperature 0 --kv-cache-dtype "$kv" \
      >"$work/$arch.$kv" 2>/dev/null
    [[ -s "$work/$arch.$kv" ]] || fail "$arch: no text with --kv-cache-dtype $kv"
  done
  # Every activation precision generates (a prompt of 8+ tokens: bf16 takes the batch GEMM).
  for act in auto f32 bf16x2 bf16x2-batches bf16 bf16-batches; do
    gen --prompt "The quick brown fox jumps over the lazy dog again" --max-tokens 4 \
      --temperature 0 --activations "$act" >"$work/$arch.act.$act" 2>/dev/null
    [[ -s "$work/$arch.act.$act" ]] || fail "$arch: no text with --activations $act"
  done
  # Without the flag the environment variable decides (scripts set it), and bench says so.
  MINIMAX_CPU_ACTIVATIONS=bf16-batches "$bin" bench --model "$model" --threads 1 \
    --prompt-tokens 8 --gen-tokens 2 --repeat 1 --bandwidth-mib 16 >"$work/$arch.bench.txt" 2>/dev/null
  for field in "copy bandwidth" "read bandwidth" prefill decode bytes/token achieved ratio; do
    grep -q "^$field" "$work/$arch.bench.txt" || fail "$arch: bench table lacks '$field'"
  done
  grep -q "activations bf16-batches" "$work/$arch.bench.txt" ||
    fail "$arch: bench does not report MINIMAX_CPU_ACTIVATIONS: $(cat "$work/$arch.bench.txt")"
  # bench --sweep through the serving engine: every cell, CSV and chart; --compare reads them.
  "$bin" bench --model "$model" --threads 1 --sweep --sweep-contexts 8,24 --sweep-streams 1,2 \
    --sweep-tokens 3 --csv "$work/$arch.sweep.csv" --chart "$work/$arch.sweep.svg" --json --quiet \
    >"$work/$arch.sweep.json" 2>"$work/$arch.sweep.err" || fail "$arch: sweep: $(cat "$work/$arch.sweep.err")"
  ! grep -q "bench --sweep" "$work/$arch.sweep.err" || fail "$arch: sweep --quiet drew progress"
  python3 - "$work/$arch.sweep.json" "$work/$arch.sweep.csv" <<'PY' || fail "$arch: sweep output wrong"
import csv, json, sys
b = json.load(open(sys.argv[1]))
cells = [(c["context"], c["streams"]) for c in b["cells"]]
assert b["activations"] in ("f32", "bf16x2", "bf16x2-batches"), b["activations"]  # auto, on this CPU
assert cells == [(8, 1), (8, 2), (24, 1), (24, 2)], cells
assert all(c["aggregate_tok_s"] > 0 and c["ttft_max_s"] >= c["ttft_mean_s"] > 0 for c in b["cells"])
rows = list(csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith("#")))
assert [(int(r["context"]), int(r["streams"])) for r in rows] == cells, rows
PY
  grep -c "<polyline" "$work/$arch.sweep.svg" | grep -qx 4 || fail "$arch: sweep chart lines"
  "$bin" bench --compare "$work/$arch.sweep.csv" "$work/$arch.sweep.csv" --label one --label two \
    --chart "$work/$arch.compare.svg" >"$work/$arch.compare.txt" || fail "$arch: compare"
  grep -q " 1.00x" "$work/$arch.compare.txt" || fail "$arch: compare of a run with itself"
  grep -c "<polyline" "$work/$arch.compare.svg" | grep -qx 8 || fail "$arch: compare chart lines"
  if "$bin" bench --model "$model" --sweep-streams 2 2>/dev/null; then
    fail "$arch: --sweep-streams without --sweep ran"
  fi
  # Runs with no cell in common are an error naming them, not an empty table; --chart needs a
  # --sweep or a --compare.
  python3 - "$work/$arch.sweep.csv" "$work/$arch.other.csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
header = next(i for i, l in enumerate(lines) if not l.startswith("#"))
column = lines[header].split(",").index("context")
out = lines[:header + 1]
for line in lines[header + 1:]:
    fields = line.split(",")
    fields[column] = str(int(fields[column]) + 1000)
    out.append(",".join(fields))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
  if "$bin" bench --compare "$work/$arch.sweep.csv" "$work/$arch.other.csv" >/dev/null \
    2>"$work/$arch.disjoint.err"; then
    fail "$arch: --compare of runs with no cell in common succeeded"
  fi
  grep -q "have no cell (context, streams) in common" "$work/$arch.disjoint.err" ||
    fail "$arch: disjoint compare: $(cat "$work/$arch.disjoint.err")"
  if "$bin" bench --model "$model" --chart "$work/x.svg" >/dev/null 2>"$work/$arch.chart.err"; then
    fail "$arch: --chart without --sweep ran"
  fi
  grep -q -- "--chart: draws a --sweep or a --compare" "$work/$arch.chart.err" ||
    fail "$arch: --chart alone: $(cat "$work/$arch.chart.err")"
done

# chat separates reasoning from the answer (the server's parser): the trained bundled model reasons
# column by column, then answers; no think marker is shown.
bundled=$(cd "$(dirname "$0")/../.." && pwd)/models/minimax-m3-tiny
echo "What is 347 + 285?" |
  "$bin" chat --model "$bundled" --threads 1 --max-tokens 64 --temperature 0 --quiet \
    >"$work/bundled.chat" 2>"$work/bundled.chat.err" || fail "bundled chat: $(cat "$work/bundled.chat.err")"
python3 - "$work/bundled.chat" <<'PY' || fail "bundled chat: reasoning not apart: $(cat "$work/bundled.chat")"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert lines[0] == "[reasoning]" and "[answer]" in lines, lines
at = lines.index("[answer]")
reasoning, answer = "\n".join(lines[1:at]), "\n".join(lines[at + 1:])
assert reasoning.strip() and answer.strip() == "632", lines
assert not any("think>" in line for line in lines), lines
PY

# Bad values fail with the parameter named.
if "$bin" generate --model "$work/m2" --prompt x --top-p 0 >/dev/null 2>"$work/err.txt"; then
  fail "--top-p 0 accepted"
fi
grep -q "top_p" "$work/err.txt" || fail "unclear --top-p error: $(cat "$work/err.txt")"
if "$bin" generate --model "$work/m2" --prompt x --system s >/dev/null 2>"$work/err.txt"; then
  fail "--system without --chat accepted"
fi
grep -q -- "--system" "$work/err.txt" || fail "unclear --system error: $(cat "$work/err.txt")"
if "$bin" generate --model "$work/m2" --prompt x --kv-cache-dtype fp16 >/dev/null 2>"$work/err.txt"; then
  fail "--kv-cache-dtype fp16 accepted"
fi
grep -q -- "--kv-cache-dtype" "$work/err.txt" || fail "unclear --kv-cache-dtype error: $(cat "$work/err.txt")"
if "$bin" generate --model "$work/m2" --prompt x --activations fp16 >/dev/null 2>"$work/err.txt"; then
  fail "--activations fp16 accepted"
fi
grep -q -- "--activations" "$work/err.txt" || fail "unclear --activations error: $(cat "$work/err.txt")"
echo "generate_tiny: ok"
