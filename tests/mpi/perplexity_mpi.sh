#!/usr/bin/env bash
# `minimax perplexity` under mpirun on the bundled model (docs/perplexity.md): a base written in
# one process, compared with runs split over 2 ranks in each mode (TP_TP and TP_EP sum in another
# order, so their KL is tiny but not always 0; DP_EP runs each window whole on one rank: exactly 0),
# and a base written by rank 0 of a DP_EP launch equal to the one-process base.
# $1 = minimax, $2 = parallel_check (unused), $3 = scratch dir.
set -euo pipefail
MINIMAX=$1
WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=$ROOT/models/minimax-m3-tiny
TEXT=$ROOT/tests/data/perplexity/minimax-m3-tiny.txt
# As tests/mpi/parallel_modes.sh: no cross-process memory copy in containers.
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to none
  --mca btl_vader_single_copy_mechanism none)

source "$ROOT/scripts/lib/check.sh"  # fail, check

ppl=(perplexity --model "$MODEL" --file "$TEXT" --activations f32 --kv-cache-dtype f32 --threads 1
  --quiet)
"$MINIMAX" "${ppl[@]}" --kl-divergence-base "$WORK/base.kl" >/dev/null 2>&1
for mode in tp_tp tp_ep dp_ep; do
  case $mode in
    tp_tp) flags=(--tensor-parallel-size 2) ;;
    tp_ep) flags=(--tensor-parallel-size 2 --enable-expert-parallel) ;;
    dp_ep) flags=(--data-parallel-size 2 --enable-expert-parallel) ;;
  esac
  "${MPIRUN[@]}" -n 2 "$MINIMAX" "${ppl[@]}" "${flags[@]}" --kl-divergence-base "$WORK/base.kl" \
    --kl-divergence --json >"$WORK/$mode.json" 2>"$WORK/$mode.err" ||
    { cat "$WORK/$mode.err"; fail "$mode: perplexity failed"; }
done
"${MPIRUN[@]}" -n 2 "$MINIMAX" "${ppl[@]}" --data-parallel-size 2 --enable-expert-parallel \
  --kl-divergence-base "$WORK/base_dp.kl" >/dev/null 2>&1 || fail "dp_ep: writing a base failed"
cmp -s "$WORK/base.kl" "$WORK/base_dp.kl" || fail "the DP_EP base differs from the one-process base"

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
for mode in ("tp_tp", "tp_ep", "dp_ep"):
    r = json.load(open(f"{work}/{mode}.json"))
    assert r["kld_max"] < 1e-5 and r["top1_agreement"] == 1, (mode, r)
    if mode == "dp_ep":
        assert r["kld_max"] == 0 and r["max_abs_dlogprob"] == 0, (mode, r)
    print(f"ok   {mode}: mean KLD {r['kld_mean']:.3g}, max {r['kld_max']:.3g}, top-1 "
          f"{r['top1_agreement']}")
PY
