# Shell helpers to run `minimax serve` in the background (sourced by scripts/run_default.sh and the
# server end-to-end tests). Needs MINIMAX (the binary) set by the caller.

SERVER_PIDS=()

# start_server LOG MODEL_DIR [serve flags...]: starts a server on a free port, waits until it
# listens and sets PORT. Fails (printing the log) if it exits or does not start within 60 s.
start_server() {
  local log=$1 model=$2
  shift 2
  "$MINIMAX" serve --model "$model" --port 0 "$@" 2>"$log" &
  SERVER_PIDS+=($!)
  wait_listening "$log" $!
}

# wait_listening LOG PID: waits until the server logging to LOG listens and sets PORT. Fails
# (printing the log) if PID exits first or nothing listens within 60 s.
wait_listening() {
  local log=$1 pid=$2
  PORT=
  for _ in $(seq 1 600); do
    # The log is created by the background job's redirection, which may not have run yet: reading
    # it before then failed the whole script under `set -e -o pipefail`.
    [[ -f $log ]] && PORT=$(sed -n 's#.* on http://[^:]*:\([0-9]*\) .*#\1#p' "$log" | head -1)
    [[ -n $PORT ]] && return 0
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$log" >&2
      echo "minimax serve exited before listening (log: $log)" >&2
      return 1
    fi
    sleep 0.1
  done
  cat "$log" >&2
  echo "minimax serve did not start within 60 s (log: $log)" >&2
  return 1
}

# stop_servers: SIGTERM to every server started here, then waits for them.
stop_servers() {
  for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SERVER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  SERVER_PIDS=()
}

# bundled_or_tiny_model WORK: sets MODEL to the bundled trained model, or, when it is absent, to a
# random tiny M3 written under WORK; BUNDLED_MODEL is 1 or 0 accordingly.
bundled_or_tiny_model() {
  MODEL=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/models/minimax-m3-tiny
  BUNDLED_MODEL=1
  if [[ ! -f $MODEL/config.json ]]; then
    "$MINIMAX" make-tiny --arch m3 --format bf16 --seed 3 --output "$1/tiny" >/dev/null
    MODEL=$1/tiny
    BUNDLED_MODEL=0
  fi
}
