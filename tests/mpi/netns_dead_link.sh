#!/usr/bin/env bash
# A link between two "hosts" (scripts/lib/netns.sh) that dies mid-request ends the job: with the
# veth link taken down, and separately with every packet dropped (netem loss 100%, or blackhole
# routes where the kernel has no netem), in each parallel mode, every rank exits within 10 s, rank
# 0's message names the rank and host that went silent, and the streaming client gets an error,
# not a hang. `--collective-timeout 3` (docs/parallel.md, "Failures"). Needs root; fails, never
# skips, when the namespaces cannot be made. $1 = minimax, $2 = parallel_check (unused), $3 = dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$3"
source "$ROOT/scripts/lib/netns.sh"
trap 'end_e2e; remove_netns_hosts' EXIT

bundled_or_tiny_model "$WORK"

echo "== an idle job outlives the timeout: rank 0's heartbeats keep the other rank waiting"
make_netns_hosts "$WORK"
netns_mpirun "$MINIMAX" serve --model "$MODEL" --port 0 --tensor-parallel-size 2 --threads 1 \
  --collective-timeout 1 >"$WORK/server.log" 2>&1 &
job=$!
BACKGROUND_PIDS+=("$job")
wait_listening "$WORK/server.log" "$job"
sleep 4
in_host0 curl -sf -H "Content-Type: application/json" -o "$WORK/answer" \
  -d '{"prompt": "a b c", "max_tokens": 4}' "http://127.0.0.1:$PORT/v1/completions" ||
  { cat "$WORK/server.log"; fail "no answer after 4 s idle with --collective-timeout 1"; }
remove_netns_hosts
wait "$job" 2>/dev/null || true
BACKGROUND_PIDS=()  # waited for: its pid may be another process's by the time this script ends

for fault in link_down link_blackhole; do
  for mode in "--tensor-parallel-size 2" "--tensor-parallel-size 2 --enable-expert-parallel" \
              "--data-parallel-size 2 --enable-expert-parallel"; do
    echo "== $fault mid-request: $mode"
    make_netns_hosts "$WORK"
    # shellcheck disable=SC2086
    rm -f "$WORK/server.log"  # not an earlier server's port (mpi_server.sh)
    netns_mpirun "$MINIMAX" serve --model "$MODEL" --port 0 $mode --threads 1 \
      --collective-timeout 3 >"$WORK/server.log" 2>&1 &
    job=$!
    BACKGROUND_PIDS+=("$job")
    wait_listening "$WORK/server.log" "$job"
    r0=$(netns_rank_pid 0) || fail "no process of rank 0 found"
    r1=$(netns_rank_pid 1) || fail "no process of rank 1 found"
    ranks="$r0 $r1"
    rm -f "$WORK/stream"
    in_host0 curl -sN -H "Content-Type: application/json" -o "$WORK/stream" \
      -d '{"prompt": "a b c", "max_tokens": 4000, "ignore_eos": true, "stream": true}' \
      "http://127.0.0.1:$PORT/v1/completions" &
    client=$!
    for _ in $(seq 1 100); do
      grep -q "^data:" "$WORK/stream" 2>/dev/null && break
      sleep 0.05
    done
    grep -q "^data:" "$WORK/stream" || fail "no token streamed before the fault"
    "$fault"
    start=$(date +%s%N)
    gone() {
      local pid
      for pid in $ranks $client; do kill -0 "$pid" 2>/dev/null && return 1; done
      return 0
    }
    for _ in $(seq 1 100); do
      gone && break
      sleep 0.1
    done
    for pid in $ranks; do
      kill -0 "$pid" 2>/dev/null && { cat "$WORK/server.log"; fail "rank process $pid still runs 10 s after $fault"; }
    done
    kill -0 "$client" 2>/dev/null && fail "the streaming client still waits 10 s after $fault"
    echo "every rank gone and the client answered $((($(date +%s%N) - start) / 1000000)) ms after $fault"
    wait "$client" && grep -q '\[DONE\]' "$WORK/stream" && fail "the stream ended as if complete"
    silent="rank 1 (host ${NETNS_HOSTS[1]})"
    grep -qF "$silent" "$WORK/server.log" || { cat "$WORK/server.log"; fail "no message names $silent"; }
    grep -F "$silent" "$WORK/server.log" | head -1
    # mpirun itself cannot reach the other host's daemon any more; it is not part of the claim.
    remove_netns_hosts
    wait "$job" 2>/dev/null && fail "the job reported success after $fault"
    BACKGROUND_PIDS=()
  done
done
echo "a dead link ends the job"
