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
  # shellcheck disable=SC2086
  start_mpi_server 2 "$WORK/plain.log" "$MODEL" $layout "${common[@]}" --batch-invariant
  python3 "$ROOT/scripts/lib/speculative_requests.py" 127.0.0.1 "$PORT" --save "$WORK/plain.json" ||
    fail "the plain job did not answer ($layout)"
  stop_mpi_servers
  # shellcheck disable=SC2086
  start_mpi_server 2 "$WORK/spec.log" "$MODEL" $layout "${common[@]}" --speculative-config "$spec"
  check "$layout: the same answers with speculation" \
    python3 "$ROOT/scripts/lib/speculative_requests.py" 127.0.0.1 "$WORK/plain.json" "$PORT"
  stop_mpi_servers
done
exit $((fails > 0))
