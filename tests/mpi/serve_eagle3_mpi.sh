#!/usr/bin/env bash
# `serve --speculative-config` with an EAGLE-3 head under `mpirun -n 2` (docs/eagle3.md): in TP_TP
# and TP_EP rank 0 runs the whole batch, so it holds every sequence's taps and drafts; the answers
# equal a plain batch-invariant job's in the same mode, one at a time and eight at a time
# (scripts/lib/speculative_requests.py), and drafts are accepted. DP_EP is refused at start with
# the mode named. The bundled model with its trained head (models/minimax-m3-tiny-eagle3).
# $1 = minimax, $2 = parallel_check (unused), $3 = dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/mpi_server.sh"

MODEL=$ROOT/models/minimax-m3-tiny
HEAD=$ROOT/models/minimax-m3-tiny-eagle3
common=(--threads 1 --max-model-len 1024 --max-num-seqs 8)
spec="{\"method\": \"eagle3\", \"model\": \"$HEAD\", \"num_speculative_tokens\": 4, \"adaptive\": false}"
for layout in "--tensor-parallel-size 2" "--tensor-parallel-size 2 --enable-expert-parallel"; do
  echo "== mpirun -n 2 $layout"
  same_answers_speculating "$layout" "$spec" "the same answers with an EAGLE-3 head" "${common[@]}"
done
echo "== mpirun -n 2 --data-parallel-size 2 --enable-expert-parallel (refused)"
if mpirun --oversubscribe --allow-run-as-root --bind-to none \
  --mca btl_vader_single_copy_mechanism none -n 2 "$MINIMAX" serve --model "$MODEL" --port 0 \
  --data-parallel-size 2 --enable-expert-parallel "${common[@]}" --speculative-config "$spec" \
  >"$WORK/dp.log" 2>&1; then
  fail "DP_EP with an EAGLE-3 head started"
fi
check "DP_EP is refused with the mode named" grep -q "not supported under DP_EP" "$WORK/dp.log"
exit $((fails > 0))
