#!/usr/bin/env bash
# `serve --speculative-config` under `mpirun -n 2` in each parallel mode (issue 37: rank 0 drafts
# and decides, the other rank follows its verify steps like any other): the answers of a plain
# batch-invariant job and of a speculating job in the same mode are equal, one at a time and eight
# at a time, streamed and not (scripts/lib/speculative_requests.py). One thread per rank.
# $1 = minimax, $2 = parallel_check (unused), $3 = dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/mpi_server.sh"

bundled_or_tiny_model "$WORK"
common=(--threads 1 --max-model-len 1024 --max-num-seqs 8)
spec='{"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_min": 2, "prompt_lookup_max": 4}'
for layout in "--tensor-parallel-size 2" \
              "--tensor-parallel-size 2 --enable-expert-parallel" \
              "--data-parallel-size 2 --enable-expert-parallel"; do
  echo "== mpirun -n 2 $layout"
  same_answers_speculating "$layout" "$spec" "the same answers with speculation" "${common[@]}"
done
exit $((fails > 0))
