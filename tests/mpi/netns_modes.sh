#!/usr/bin/env bash
# The parallel modes between two "hosts" over TCP (scripts/lib/netns.sh: two network namespaces
# joined by a veth pair, one rank in each, Open MPI's TCP transport only): each mode against one
# process (tests/mpi/parallel_check.cc), then `minimax serve` answering the official OpenAI Node
# client, stopped by SIGTERM to rank 0. Needs root; fails (never skips) when the namespaces cannot
# be made. $1 = minimax, $2 = parallel_check, $3 = scratch dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/netns.sh"
CHECK=$2
trap 'end_e2e; remove_netns_hosts' EXIT

[[ -d $ROOT/tools/serve_client/node_modules/openai ]] ||
  fail "tools/serve_client/node_modules missing: run (cd tools/serve_client && npm install)"
make_netns_hosts "$WORK"

MODES=("--tensor-parallel-size 2" "--tensor-parallel-size 2 --enable-expert-parallel"
  "--data-parallel-size 2 --enable-expert-parallel")
"$MINIMAX" make-tiny --arch m2 --shape parallel --format fp8-block --output "$WORK/m2" >/dev/null
"$MINIMAX" make-tiny --arch m3 --shape parallel --format bf16 --output "$WORK/m3" >/dev/null
for mode in "${MODES[@]}"; do
  echo "== parity over TCP between namespaces: $mode"
  # shellcheck disable=SC2086
  netns_mpirun "$CHECK" $mode "$WORK/m2" "$WORK/m3"
done

bundled_or_tiny_model "$WORK"
TRAINED=()
if [[ $BUNDLED_MODEL == 1 ]]; then TRAINED=(--trained); fi
for mode in "${MODES[@]}"; do
  echo "== serve over TCP between namespaces: $mode"
  # shellcheck disable=SC2086
  rm -f "$WORK/server.log"  # not an earlier server's port (mpi_server.sh)
  netns_mpirun "$MINIMAX" serve --model "$MODEL" --port 0 $mode --served-model-name tiny \
    --threads 1 --max-model-len 2048 --api-key sk-netns >"$WORK/server.log" 2>&1 &
  job=$!
  BACKGROUND_PIDS+=("$job")
  wait_listening "$WORK/server.log" "$job"
  in_host0 node "$ROOT/tools/serve_client/client_test.mjs" --url "http://127.0.0.1:$PORT" \
    --key sk-netns --model tiny --markers m3 "${TRAINED[@]}" || fail "OpenAI client test ($mode)"
  # SIGTERM to rank 0: it drains, tells rank 1 (the other host) to stop, the job ends with 0.
  rank0=$(netns_rank_pid 0) || fail "no process of rank 0 found ($mode)"
  kill -TERM "$rank0"
  for _ in $(seq 1 100); do
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$job" 2>/dev/null && fail "the job still runs 10 s after SIGTERM to rank 0 ($mode)"
  wait "$job" || fail "the job ended with status $? after SIGTERM to rank 0 ($mode)"
  BACKGROUND_PIDS=()  # waited for: its pid may be another process's by the time this script ends
done
echo "the parallel modes pass between namespaces over TCP"
