#!/usr/bin/env bash
# Streaming clients that stop reading (issue 32 F5) cannot starve anyone: with --http-threads 2
# and four such clients, each stream megabytes long, /health answers at once (the event loop
# answers it), a new chat completes (the stalled streams hold no worker: they are cut once 1 MiB
# behind), and the stalled clients find their streams cut, not completed.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"

bundled_or_tiny_model "$WORK"
start_server "$WORK/server.log" "$MODEL" --threads 2 --max-model-len 4096 --http-threads 2
URL=http://127.0.0.1:$PORT
STALLED=4

mkfifo "$WORK/go"
python3 "$ROOT/scripts/lib/stalled_stream_clients.py" 127.0.0.1 "$PORT" $STALLED 3800 \
  <"$WORK/go" >"$WORK/clients.out" &
CLIENTS_PID=$!
BACKGROUND_PIDS+=("$CLIENTS_PID")
exec 4>"$WORK/go"
for _ in $(seq 1 300); do
  grep -q '^ready' "$WORK/clients.out" && break
  sleep 0.1
done
check "$STALLED streaming clients that do not read are connected" grep -q '^ready' "$WORK/clients.out"
sleep 2  # the streams are under way and their clients' windows full

code=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 "$URL/health" || true)
check "/health answers while every worker is streaming ($code s)" test "${code%% *}" == 200
code=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' --max-time 5 "$URL/metrics" || true)
check "/metrics too ($code s)" test "${code%% *}" == 200
# The old transport held both workers in blocked writes for its 60 s write timeout.
code=$(curl -s -o "$WORK/chat" -w '%{http_code} %{time_total}' --max-time 45 \
  -H "Content-Type: application/json" \
  -d '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}' \
  "$URL/v1/chat/completions" || true)
check "a new chat completes beside the stalled streams ($code s)" test "${code%% *}" == 200

# The stalled clients start reading only once every stalled request is cut (its four choices
# aborted): reading earlier would rescue a stream that has not fallen far enough behind yet. One
# the server fails to cut finishes with "length" instead, and the wait below runs out.
aborted() {
  curl -s "$URL/metrics" | awk '/request_success_total.*finished_reason="abort"/ {n += $2}
    END {print n + 0}'
}
for _ in $(seq 1 600); do
  (($(aborted) >= STALLED * 4)) && break
  sleep 0.2
done
check "every stalled request was cut ($(aborted) of $((STALLED * 4)) choices aborted)" \
  test "$(aborted)" -ge $((STALLED * 4))
echo go >&4
exec 4>&-
wait "$CLIENTS_PID" || true
cut=$(grep -c '^cut$' "$WORK/clients.out" || true)
check "the stalled clients' streams were cut ($cut of $STALLED)" test "$cut" == $STALLED
check "the server still serves" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" == 200
((fails == 0)) && echo "serve stalled streams e2e: all passed"
exit $((fails > 0))
