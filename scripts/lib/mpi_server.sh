# Shell helpers to run `minimax serve` under mpirun in the background (sourced by tests/mpi/*.sh
# after scripts/lib/server.sh). Needs MINIMAX (the binary) set by the caller.

MPI_PID=

# start_mpi_server RANKS LOG MODEL_DIR [serve flags...]: starts `mpirun -n RANKS minimax serve` on a
# free port, waits until rank 0 listens (server.sh's wait_listening) and sets PORT and MPI_PID.
start_mpi_server() {
  local ranks=$1 log=$2 model=$3
  shift 3
  # A log left by an earlier server would give wait_listening that server's port before this
  # job's redirection empties the file.
  rm -f "$log"
  # (single-copy off: containers often forbid the cross-process copy Open MPI's shared memory tries)
  mpirun --oversubscribe --allow-run-as-root --bind-to none \
    --mca btl_vader_single_copy_mechanism none -n "$ranks" \
    "$MINIMAX" serve --model "$model" --port 0 "$@" >"$log" 2>&1 &
  MPI_PID=$!
  wait_listening "$log" "$MPI_PID"
}

# rank_pid R: the pid of rank R of the job started by start_mpi_server (Open MPI puts the rank in
# each process's environment).
rank_pid() {
  local pid env
  for pid in $(pgrep -P "$MPI_PID"); do
    # Read whole first: `tr | grep -q` under pipefail fails when grep's early exit cuts tr off.
    env=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null) || continue
    if grep -qx "OMPI_COMM_WORLD_RANK=$1" <<<"$env"; then
      echo "$pid"
      return 0
    fi
  done
  return 1
}

# stop_mpi_servers: ends a job still running (SIGTERM to mpirun ends every rank).
stop_mpi_servers() {
  if [[ -n $MPI_PID ]]; then
    kill "$MPI_PID" 2>/dev/null || true
    wait "$MPI_PID" 2>/dev/null || true
  fi
  MPI_PID=
}

# same_answers_speculating LAYOUT SPEC WHAT ARGS...: a plain batch-invariant job of MODEL in
# LAYOUT saves its answers (scripts/lib/speculative_requests.py), then a job with
# --speculative-config SPEC must give the same ones (check "LAYOUT: WHAT"). ARGS: serve flags both
# jobs take.
same_answers_speculating() {
  local layout=$1 spec=$2 what=$3
  shift 3
  # shellcheck disable=SC2086
  start_mpi_server 2 "$WORK/plain.log" "$MODEL" $layout "$@" --batch-invariant
  python3 "$ROOT/scripts/lib/speculative_requests.py" 127.0.0.1 "$PORT" --save "$WORK/plain.json" ||
    fail "the plain job did not answer ($layout)"
  stop_mpi_servers
  # shellcheck disable=SC2086
  start_mpi_server 2 "$WORK/spec.log" "$MODEL" $layout "$@" --speculative-config "$spec"
  check "$layout: $what" \
    python3 "$ROOT/scripts/lib/speculative_requests.py" 127.0.0.1 "$WORK/plain.json" "$PORT"
  stop_mpi_servers
}
