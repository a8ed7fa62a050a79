#!/usr/bin/env bash
# minimax.cpp against llama.cpp on the benchmark shape, in the same run (issue 36's table): for each
# thread count, ROUNDS alternating rounds of `minimax bench` (one checkpoint per pair) and
# `llama-bench` (its GGUF of the same shape, ../shared/bench/peer_gguf.py), best of the rounds for
# each program; prints prefill and decode tok/s of both, our/llama ratios, and our decode's share of
# the read bandwidth and prefill's share of the compute peak that the same `bench` run measures.
# MINIMAX may name several binaries, comma-separated (an old and a new build): each round runs
# each of them, then llama-bench, and each gets its own rows.
# Usage:
#   [PROMPT=512] [GEN=64] bench/peer_side_by_side.sh MINIMAX LLAMA_BENCH ROUNDS "THREADS" \
#     OUR_MODEL=GGUF [OUR_MODEL=GGUF ...]
# e.g. bench/peer_side_by_side.sh build/minimax /tmp/llama/build/bin/llama-bench 3 "1 2" \
#        /tmp/bench-fp8-block=/tmp/gguf/bench-Q8_0.gguf /tmp/bench-bf16=/tmp/gguf/bench-BF16.gguf
set -euo pipefail
MINIMAX=$1
LLAMA=$2
ROUNDS=$3
THREADS=$4
shift 4
PROMPT=${PROMPT:-512}
GEN=${GEN:-64}
PY=$(command -v /usr/bin/python3 || command -v python3)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(grep -m1 'model name' /proc/cpuinfo)"
pair=0
for spec in "$@"; do
  ours=${spec%%=*}
  gguf=${spec#*=}
  echo "$ours $gguf" >"$WORK/pair-$pair"
  for t in $THREADS; do
    for r in $(seq "$ROUNDS"); do
      b=0
      for bin in ${MINIMAX//,/ }; do
        "$bin" bench --model "$ours" --threads "$t" --prompt-tokens "$PROMPT" \
          --gen-tokens "$GEN" --repeat 1 --bandwidth-mib 512 --json --quiet 2>/dev/null \
          >"$WORK/ours-$pair-$t-$r-$b.json"
        b=$((b + 1))
      done
      "$LLAMA" -m "$gguf" -t "$t" -p "$PROMPT" -n "$GEN" -r 1 -o json 2>/dev/null \
        >"$WORK/llama-$pair-$t-$r.json"
    done
  done
  pair=$((pair + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$WORK" "$ROUNDS" "$pair" "$MINIMAX" $THREADS <<'PYEOF'
import json, os, sys
work, rounds, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
binaries, threads = sys.argv[4].split(","), sys.argv[5:]
print(f"{'model':<28} {'thr':>3} {'prefill ours':>12} {'llama':>8} {'ratio':>6} "
      f"{'decode ours':>11} {'llama':>7} {'ratio':>6} {'decode/read':>11} {'prefill/peak':>12}")
for p in range(pairs):
    ours_dir, gguf = open(os.path.join(work, f"pair-{p}")).read().split()
    for t in threads:
        llama_pp, llama_tg = 0.0, 0.0
        for r in range(1, rounds + 1):
            for row in json.load(open(os.path.join(work, f"llama-{p}-{t}-{r}.json"))):
                if row["n_prompt"] > 0:
                    llama_pp = max(llama_pp, row["avg_ts"])
                else:
                    llama_tg = max(llama_tg, row["avg_ts"])
        for b, binary in enumerate(binaries):
            ours = [json.load(open(os.path.join(work, f"ours-{p}-{t}-{r}-{b}.json")))
                    for r in range(1, rounds + 1)]
            pp = max(ours, key=lambda x: x["prefill_tok_s"])
            tg = max(ours, key=lambda x: x["decode_tok_s"])
            name = os.path.basename(ours_dir.rstrip("/")) + " / " + os.path.basename(gguf)
            if len(binaries) > 1:
                print(f"  ({binary})")
            print(f"{name[:28]:<28} {t:>3} {pp['prefill_tok_s']:>12.1f} {llama_pp:>8.1f} "
                  f"{pp['prefill_tok_s'] / llama_pp:>6.2f} {tg['decode_tok_s']:>11.2f} "
                  f"{llama_tg:>7.2f} {tg['decode_tok_s'] / llama_tg:>6.2f} "
                  f"{tg['ratio_to_read']:>11.3f} {pp['prefill_ratio_to_peak']:>12.3f}")
PYEOF
