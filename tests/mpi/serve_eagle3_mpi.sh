#!/usr/bin/env bash
# `serve --speculative-config` with an EAGLE-3 head under `mpirun -n 2` (docs/eagle3.md): in TP_TP
# and TP_EP rank 0 runs the whole batch, so it holds every sequence's taps and drafts; under DP_EP
# each rank sends its own sequences' taps to rank 0 with their logits. In every mode the answers
# equal a plain batch-invariant job's in the same mode, one at a time and eight at a time
# (scripts/lib/speculative_requests.py), and drafts are accepted. The bundled model with its
# trained head (models/minimax-m3-tiny-eagle3).
# $1 = minimax, $2 = parallel_check (unused), $3 = dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/mpi_server.sh"

MODEL=$ROOT/models/minimax-m3-tiny
HEAD=$ROOT/models/minimax-m3-tiny-eagle3
common=(--threads 1 --max-model-len 1024 --max-num-seqs 8)
spec="{\"method\": \"eagle3\", \"model\": \"$HEAD\", \"num_speculative_tokens\": 4, \"adaptive\": false}"
for layout in "--tensor-parallel-size 2" "--tensor-parallel-size 2 --enable-expert-parallel" \
  "--data-parallel-size 2 --enable-expert-parallel"; do
  echo "== mpirun -n 2 $layout"
  same_answers_speculating "$layout" "$spec" "the same answers with an EAGLE-3 head" "${common[@]}"
done
exit $((fails > 0))
