#!/usr/bin/env bash
# One process with two threads against `mpirun -n 2` with one thread per rank (TP_EP and TP_TP), on
# one model, in the same run: the three layouts alternate ROUNDS times (so a change in the
# machine's load hits all alike), each run best of --repeat 3. Prints each layout's best prefill
# and decode tok/s, the ratio to one process, rank 0's communication seconds per decoded token and
# the weight bytes each rank reads.
# Usage:
#   bench/parallel_decode.sh MINIMAX MODEL_DIR [ROUNDS=3] [GEN_TOKENS=32]
set -euo pipefail
MINIMAX=$1
MODEL=$2
ROUNDS=${3:-3}
GEN=${4:-32}
PY=$(command -v /usr/bin/python3 || command -v python3)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to none -n 2)
COMMON=(bench --model "$MODEL" --gen-tokens "$GEN" --json)

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  "$MINIMAX" "${COMMON[@]}" --threads 2 2>/dev/null >"$WORK/single-$r.json"
  "${MPIRUN[@]}" "$MINIMAX" "${COMMON[@]}" --threads 1 --tensor-parallel-size 2 \
    --enable-expert-parallel 2>/dev/null >"$WORK/tp_ep-$r.json"
  "${MPIRUN[@]}" "$MINIMAX" "${COMMON[@]}" --threads 1 --tensor-parallel-size 2 \
    2>/dev/null >"$WORK/tp_tp-$r.json"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$WORK" "$ROUNDS" <<'PYEOF'
import json, sys, os
work, rounds = sys.argv[1], int(sys.argv[2])
print(f"{'layout':>22} {'prefill tok/s':>14} {'decode tok/s':>13} {'vs 1 process':>13} "
      f"{'comm ms/token':>14}  weight MB by rank")
base = None
for name, label in (("single", "1 process, 2 threads"), ("tp_ep", "TP_EP, 2 ranks × 1"),
                    ("tp_tp", "TP_TP, 2 ranks × 1")):
    runs = [json.load(open(os.path.join(work, f"{name}-{r}.json"))) for r in range(1, rounds + 1)]
    best = max(runs, key=lambda x: x["decode_tok_s"])
    prefill = max(x["prefill_tok_s"] for x in runs)
    if base is None:
        base = best["decode_tok_s"]
    p = best["parallel"]
    mb = " ".join(f"{b / 1e6:.0f}" for b in p["mapped_bytes_by_rank"])
    print(f"{label:>22} {prefill:14.1f} {best['decode_tok_s']:13.2f} "
          f"{best['decode_tok_s'] / base:13.3f} {p['decode_comm_seconds_per_token'] * 1e3:14.2f}  {mb}")
PYEOF
