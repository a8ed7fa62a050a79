#!/usr/bin/env bash
# Latency of `minimax serve` with many slow or idle connections open (issue 17, item 2): REQUESTS
# sequential GET /health (each on a new connection) and 5 short chats, first with no other
# connection, then with COUNT slow clients holding connections (scripts/lib/slow_clients.py);
# prints the median, 99th percentile and maximum of each. The goal: /health under 100 ms with
# 1,000 slow clients. Usage:
#   bench/serve_slow_clients.sh MINIMAX MODEL_DIR [COUNT=1000] [REQUESTS=200]
set -euo pipefail
MINIMAX=$1
MODEL=$2
COUNT=${3:-1000}
REQUESTS=${4:-200}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
source "$ROOT/scripts/lib/server.sh"
CLIENTS_PID=
trap '[[ -n $CLIENTS_PID ]] && kill $CLIENTS_PID 2>/dev/null; stop_servers; rm -rf "$WORK"' EXIT
if (($(ulimit -n) < COUNT + 100)); then ulimit -n $((COUNT + 100)); fi
start_server "$WORK/server.log" "$MODEL" --served-model-name bench --threads 2 --max-model-len 1024
URL=http://127.0.0.1:$PORT
CHAT='{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, "temperature": 0}'

# summary FILE: "median p99 max" in milliseconds of the seconds listed in FILE
summary() {
  sort -n "$1" | awk '{v[NR] = $1 * 1000} END {
    p99 = int(NR * 0.99); if (p99 < 1) p99 = 1
    printf "median %.1f ms, p99 %.1f ms, max %.1f ms (%d requests)", v[int((NR + 1) / 2)], v[p99], v[NR], NR}'
}
measure() {  # measure LABEL
  : >"$WORK/health" && : >"$WORK/chat"
  for _ in $(seq 1 "$REQUESTS"); do
    curl -s -o /dev/null -w '%{time_total}\n' --max-time 30 "$URL/health" >>"$WORK/health"
  done
  for _ in 1 2 3 4 5; do
    curl -s -o /dev/null -w '%{time_total}\n' --max-time 120 -H "Content-Type: application/json" \
      -d "$CHAT" "$URL/v1/chat/completions" >>"$WORK/chat"
  done
  echo "$1: /health $(summary "$WORK/health"); chat $(summary "$WORK/chat")"
}

curl -s -o /dev/null -H "Content-Type: application/json" -d "$CHAT" "$URL/v1/chat/completions"
measure "no other connections"
mkfifo "$WORK/hold"
python3 "$ROOT/scripts/lib/slow_clients.py" 127.0.0.1 "$PORT" "$COUNT" <"$WORK/hold" >"$WORK/clients" &
CLIENTS_PID=$!
exec 4>"$WORK/hold"
for _ in $(seq 1 300); do grep -q '^ready' "$WORK/clients" && break; sleep 0.1; done
measure "$(cut -d' ' -f2 "$WORK/clients") slow clients"
exec 4>&-
