#!/usr/bin/env bash
# `minimax serve` under `mpirun -n 2` (TP_EP, then DP_EP), one thread per rank: the official OpenAI
# Node client test against it (with the bundled trained model its answers are checked too), then
# SIGTERM to rank 0 stops every rank cleanly. $1 = minimax, $2 = parallel_check (unused), $3 = dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/mpi_server.sh"

[[ -d $ROOT/tools/serve_client/node_modules/openai ]] ||
  fail "tools/serve_client/node_modules missing: run (cd tools/serve_client && npm install)"

bundled_or_tiny_model "$WORK"
TRAINED=()
if [[ $BUNDLED_MODEL == 1 ]]; then TRAINED=(--trained); fi
KEY=sk-mpi

for layout in "--tensor-parallel-size 2 --enable-expert-parallel" \
              "--data-parallel-size 2 --enable-expert-parallel"; do
  echo "== serve, mpirun -n 2 $layout"
  # shellcheck disable=SC2086
  start_mpi_server 2 "$WORK/server.log" "$MODEL" $layout --served-model-name tiny --threads 1 \
    --api-key "$KEY" --max-model-len 2048
  node "$ROOT/tools/serve_client/client_test.mjs" --url "http://127.0.0.1:$PORT" --key "$KEY" \
    --model tiny --markers m3 "${TRAINED[@]}" || fail "OpenAI client test ($layout)"
  # SIGTERM to rank 0: it drains, tells the other rank to stop, and the job ends with status 0.
  kill -TERM "$(rank_pid 0)"
  for _ in $(seq 1 100); do
    kill -0 "$MPI_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$MPI_PID" 2>/dev/null && fail "the job still runs 10 s after SIGTERM to rank 0"
  wait "$MPI_PID" || fail "the job ended with status $? after SIGTERM to rank 0"
  MPI_PID=
done
echo "serve under mpirun passed"
