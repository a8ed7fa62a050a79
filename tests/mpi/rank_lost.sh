#!/usr/bin/env bash
# One rank killed mid-request (SIGKILL, as the OOM killer would): every rank of the job is gone
# within 10 s, the job's output names the lost rank, and nothing hangs.
# $1 = minimax, $2 = parallel_check (unused), $3 = scratch dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/mpi_server.sh"


bundled_or_tiny_model "$WORK"
for lost in 1 0; do
  echo "== rank $lost killed mid-request"
  start_mpi_server 2 "$WORK/server.log" "$MODEL" --tensor-parallel-size 2 --threads 1
  ranks=$(pgrep -P "$MPI_PID" | tr '\n' ' ')
  # A long streamed completion; the kill comes once tokens flow.
  curl -sN -H "Content-Type: application/json" -o "$WORK/stream" \
    -d '{"prompt": "a b c", "max_tokens": 3000, "ignore_eos": true, "stream": true}' \
    "http://127.0.0.1:$PORT/v1/completions" &
  client=$!
  for _ in $(seq 1 100); do
    [[ -s $WORK/stream ]] && break
    sleep 0.05
  done
  [[ -s $WORK/stream ]] || fail "no token streamed before the kill"
  kill -KILL "$(rank_pid "$lost")"
  start=$(date +%s%N)
  for _ in $(seq 1 100); do
    alive=0
    for pid in $ranks; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [[ $alive == 0 ]] && ! kill -0 "$MPI_PID" 2>/dev/null && break
    sleep 0.1
  done
  for pid in $ranks; do
    kill -0 "$pid" 2>/dev/null && fail "rank process $pid still runs 10 s after rank $lost was killed"
  done
  kill -0 "$MPI_PID" 2>/dev/null && fail "mpirun still runs 10 s after rank $lost was killed"
  echo "every rank gone $((($(date +%s%N) - start) / 1000000)) ms after the kill"
  wait "$MPI_PID" && fail "the job reported success after losing rank $lost"
  MPI_PID=
  grep -q "rank $lost" "$WORK/server.log" || { cat "$WORK/server.log"; fail "no message names rank $lost"; }
  grep "rank $lost" "$WORK/server.log" | head -2
  wait "$client" || true
done
echo "lost ranks end the job"
