#!/usr/bin/env bash
# `minimax serve` as a process under abuse (issue 17): a second server on a port in use exits
# naming it; a 256 MiB chunked upload is refused (413) while the server's memory stays flat, and
# without a key gets 401; SIGTERM or SIGINT during start-up ends the process at once; a slow
# client does not keep a stopped server alive past --shutdown-timeout; a second signal exits at
# once; a KV pool smaller than --max-model-len is refused naming --kv-cache-memory; a taken port
# fails before the load and --port 70000 is refused; vLLM's deployment flags are accepted; every
# log line has a timestamp and a level, each request has one line with its status and tokens,
# --log-format json lines parse, and a CORS preflight is answered for --allowed-origins only.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"
KEY=sk-test-key

bundled_or_tiny_model "$WORK"

# A slow client on fd 3: a request that promises 100 bytes of body and sends 9 of them.
half_sent_request() {
  exec 3<>"/dev/tcp/127.0.0.1/$PORT"
  printf 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"prompt"' >&3
  sleep 0.3
}
SERVE=(--threads 2 --max-model-len 1024)

seconds_since() { awk -v now="$(date +%s.%N)" -v start="$1" 'BEGIN {printf "%.2f", now - start}'; }
less_than() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a < b)}'; }
# ends PID SECONDS: waits up to SECONDS for PID, then SIGKILLs it; sets status to its exit status
# (not a $(...) function: a subshell cannot wait for this shell's children).
ends() {
  timeout "$2" tail -s 0.05 --pid="$1" -f /dev/null || kill -KILL "$1" 2>/dev/null || true
  status=0
  wait "$1" || status=$?
}

start_server "$WORK/a.log" "$MODEL" "${SERVE[@]}" --api-key "$KEY"
A_PID=${SERVER_PIDS[-1]}
URL=http://127.0.0.1:$PORT

# A second server on the same port: no SO_REUSEPORT, so it fails to bind, names the address and
# exits non-zero (bounded by timeout in case it binds and serves).
status=0
timeout 60 "$MINIMAX" serve --model "$MODEL" --port "$PORT" "${SERVE[@]}" 2>"$WORK/b.log" ||
  status=$?
check "second server on port $PORT exits non-zero (status $status)" \
  test "$status" -ne 0 -a "$status" -ne 124
check "it names 127.0.0.1:$PORT as in use" \
  grep -q "cannot listen on 127.0.0.1:$PORT: Address already in use" "$WORK/b.log"
# ... before the weights are read (issue 39: the port is bound first), so at once.
start=$(date +%s.%N)
"$MINIMAX" serve "$MODEL" --port "$PORT" "${SERVE[@]}" 2>"$WORK/b2.log" || true
elapsed=$(seconds_since "$start")
check "... in under a second ($elapsed s)" less_than "$elapsed" 1
check "... without loading the model" bash -c "! grep -q 'layers, kernels' '$WORK/b2.log'"

# Ports outside 0-65535 are refused naming the flag (70000 used to serve on 4464).
status=0
"$MINIMAX" serve "$MODEL" --port 70000 2>"$WORK/port.log" || status=$?
check "--port 70000 refused (status $status)" test "$status" -eq 1
check "... naming --port" grep -q -- "error: --port: Value 70000 not in range" "$WORK/port.log"

# vLLM's deployment flags (MiniMax's guides), the model as the first argument, and the served
# name from the directory's name.
"$MINIMAX" serve "$MODEL/" --port 0 "${SERVE[@]}" --trust-remote-code --enable-auto-tool-choice \
  --dtype bfloat16 --enable-prefix-caching --kv-cache-dtype fp8 2>"$WORK/vllm.log" &
SERVER_PIDS+=($!)
wait_listening "$WORK/vllm.log" $!
check "vLLM's flags accepted; --trust-remote-code noted as changing nothing" \
  grep -q "note: --trust-remote-code changes nothing here" "$WORK/vllm.log"
check "... and --enable-auto-tool-choice" \
  grep -q "note: --enable-auto-tool-choice changes nothing here" "$WORK/vllm.log"
check "the served name is the directory's name, $(basename "$MODEL")" \
  grep -q "\"id\":\"$(basename "$MODEL")\"" <(curl -s "http://127.0.0.1:$PORT/v1/models")
kill "${SERVER_PIDS[-1]}"
wait "${SERVER_PIDS[-1]}" || true
unset 'SERVER_PIDS[-1]'
status=0
"$MINIMAX" serve "$MODEL" --dtype float16 2>"$WORK/dtype.log" || status=$?
check "--dtype float16 refused naming the flag (status $status)" \
  grep -q -- "error: --dtype: float16 not in {auto,bfloat16}" "$WORK/dtype.log"

# A KV pool too small for --max-model-len is refused at start-up naming the flag and its value
# as typed (not the engine's internal kv_cache_bytes).
status=0
timeout 60 "$MINIMAX" serve --model "$MODEL" --port 0 "${SERVE[@]}" --kv-cache-memory 512KiB \
  2>"$WORK/c.log" || status=$?
check "a 512 KiB KV pool is refused (status $status)" test "$status" -ne 0 -a "$status" -ne 124
check "the refusal names --kv-cache-memory 512KiB and --max-model-len 1024" \
  grep -q -- "--kv-cache-memory 512KiB: the KV pool holds .* less than --max-model-len 1024" \
  "$WORK/c.log"

# 256 MiB of chunked upload against a 32 MiB limit: refused with 413 once the limit is passed,
# the rest discarded unread; the server's RSS, sampled every 20 ms, grows by at most 64 MiB.
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$A_PID/status"; }
sample_rss() {
  local peak=0 now
  while [[ -f $WORK/sampling ]]; do
    now=$(rss_kib)
    ((now > peak)) && peak=$now
    echo "$peak" >"$WORK/peak"
    sleep 0.02
  done
}
upload() {  # upload BYTES [curl args...]: prints the HTTP status (000 when there was none)
  local bytes=$1
  shift
  # -T - streams stdin chunked (--data-binary @- would read it all into curl first)
  head -c "$bytes" /dev/zero | curl -s -o "$WORK/body" -w '%{http_code}' -X POST -T - \
    -H "Content-Type: application/json" "$@" "$URL/v1/chat/completions" || true
}
before=$(rss_kib)
touch "$WORK/sampling"
sample_rss &
sampler=$!
code=$(upload $((256 << 20)) -H "Authorization: Bearer $KEY")
rm "$WORK/sampling"
wait "$sampler"
growth=$((($(cat "$WORK/peak") - before) / 1024))
check "256 MiB chunked upload → 413 (got $code)" test "$code" == 413
check "... with the OpenAI error body" grep -q '"error":{"message":"request body over' "$WORK/body"
check "... RSS grew by $growth MiB (limit 64)" test "$growth" -le 64
start=$(date +%s.%N)
code=$(upload $((128 << 20)))
elapsed=$(seconds_since "$start")
check "128 MiB chunked upload without a key → 401 (got $code)" test "$code" == 401
check "... within 3 s, unread (took $elapsed s)" less_than "$elapsed" 3
check "server still serves after the uploads" \
  test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/health")" == 200

# A signal during start-up (the model load) ends the process at once with 128 + the signal's
# number. Start-up is short with the tiny model, so the signal comes 0.05 s after the exec, and a
# 2 GiB KV pool (zeroed at start-up: about half a second) keeps the start-up going past it; the
# default pool, sized to what the tiny model's requests can fill, is ready sooner than that. (env
# gives SIGINT back its default action: a shell starts background jobs with it ignored.)
for signal in TERM INT; do
  env --default-signal=INT "$MINIMAX" serve --model "$MODEL" --port 0 "${SERVE[@]}" \
    --kv-cache-memory 2GiB 2>"$WORK/startup-$signal.log" &
  pid=$!
  # Until env has exec'd minimax, SIGINT is still ignored (a loaded machine can take that long).
  for _ in $(seq 1 100); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == minimax ]] && break
    sleep 0.01
  done
  sleep 0.05
  start=$(date +%s.%N)
  kill -s "$signal" "$pid"
  ends "$pid" 10
  elapsed=$(seconds_since "$start")
  expected=$((128 + $(kill -l "$signal")))
  check "SIG$signal at 0.05 s: exited in $elapsed s with status $status (expect $expected)" \
    test "$status" == "$expected"
  check "... within 3 s" less_than "$elapsed" 3
done

# Draining is bounded: a client that sent half a request holds its connection (and its thread)
# open; after SIGTERM the server stops accepting, and 2 s later drops the connection and exits 0.
start_server "$WORK/drain.log" "$MODEL" "${SERVE[@]}" --shutdown-timeout 2
pid=${SERVER_PIDS[-1]}
half_sent_request
start=$(date +%s.%N)
kill -TERM "$pid"
ends "$pid" 20
elapsed=$(seconds_since "$start")
exec 3>&-
check "a slow client does not keep a stopped server alive: exited in $elapsed s, status $status" \
  test "$status" == 0
check "... after the 2 s timeout, not long after" less_than "$elapsed" 5
check "... and it says it dropped the connection" grep -q "dropped 1 connection" "$WORK/drain.log"

# A second signal exits at once, even with a connection still draining.
start_server "$WORK/second.log" "$MODEL" "${SERVE[@]}" --shutdown-timeout 60
pid=${SERVER_PIDS[-1]}
half_sent_request
kill -TERM "$pid"
sleep 0.3
start=$(date +%s.%N)
kill -INT "$pid"
ends "$pid" 10
elapsed=$(seconds_since "$start")
exec 3>&-
check "second signal (INT) exits at once: $elapsed s, status $status (expect 130)" \
  test "$status" == 130
check "... within 2 s" less_than "$elapsed" 2
SERVER_PIDS=("$A_PID")

# Operators' logs and CORS (issue 39 item 5). Server A's log is text: every line starts with an
# ISO-8601 UTC timestamp and a level, and its refused uploads each have a request line.
check "every line of a text log has a timestamp and a level" \
  python3 -c 'import re,sys; bad=[l for l in open(sys.argv[1]) if not re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (debug|info|warning|error) ", l)]; print("".join(bad[:3]), end=""); sys.exit(bool(bad))' "$WORK/a.log"
check "... with a request line for the 413 upload" grep -qE \
  "info +request client=127\.0\.0\.1:[0-9]+ method=POST path=/v1/chat/completions status=413 " \
  "$WORK/a.log"
check "... and for the 401 one" grep -qE "request .* path=/v1/chat/completions status=401 " "$WORK/a.log"
# A JSON-logging server with CORS for one origin: one request line per request sent, each
# with the status and the token counts the client got; /health only at debug level.
start_server "$WORK/json.log" "$MODEL" "${SERVE[@]}" --quiet --api-key "$KEY" \
  --log-format json --allowed-origins '["http://app.example"]'
pid=${SERVER_PIDS[-1]}
URL=http://127.0.0.1:$PORT
AUTH=(-H "Authorization: Bearer $KEY" -H "Content-Type: application/json")
curl -s "${AUTH[@]}" -o "$WORK/chat.json" "$URL/v1/chat/completions" \
  -d '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}'
curl -sN "${AUTH[@]}" -o "$WORK/stream.txt" "$URL/v1/completions" \
  -d '{"prompt": "hello", "max_tokens": 3, "stream": true, "stream_options": {"include_usage": true}}'
curl -s -o /dev/null "$URL/v1/models"                                     # 401
curl -s -o /dev/null "${AUTH[@]}" "$URL/v1/chat/completions" \
  -d '{"model": "other", "messages": [{"role": "user", "content": "hi"}]}'  # 404
curl -s -o /dev/null "$URL/health"                                        # debug only
preflight() {  # preflight ORIGIN: the reply's status line and headers
  curl -s -D - -o /dev/null -X OPTIONS -H "Origin: $1" -H "Access-Control-Request-Method: POST" \
    -H "Access-Control-Request-Headers: authorization, content-type" "$URL/v1/chat/completions" |
    tr -d '\r'
}
preflight http://app.example >"$WORK/preflight-ok"
preflight http://evil.example >"$WORK/preflight-other"
curl -s -D "$WORK/cors-get" -o /dev/null -H "Origin: http://app.example" "${AUTH[@]}" "$URL/v1/models"
check "a preflight from the allowed origin → 204, without the key" \
  grep -q "^HTTP/1.1 204" "$WORK/preflight-ok"
for header in "Access-Control-Allow-Origin: http://app.example" \
  "Access-Control-Allow-Methods: POST, OPTIONS" \
  "Access-Control-Allow-Headers: authorization, content-type" "Access-Control-Max-Age: 600"; do
  check "... with $header" grep -qx "$header" "$WORK/preflight-ok"
done
check "a preflight from another origin → 405 with no CORS header" \
  bash -c "grep -q '^HTTP/1.1 405' '$WORK/preflight-other' && ! grep -qi '^access-control' '$WORK/preflight-other'"
check "a GET from the allowed origin carries Access-Control-Allow-Origin" \
  grep -qi "^Access-Control-Allow-Origin: http://app.example" "$WORK/cors-get"
kill -TERM "$pid"  # every line is written once it has exited
ends "$pid" 20
unset 'SERVER_PIDS[-1]'
check "every JSON log line parses, with ts, level and msg; one request line per request sent" \
  python3 - "$WORK/json.log" "$WORK/chat.json" "$WORK/stream.txt" <<'PY'
import json, re, sys
lines = [json.loads(line) for line in open(sys.argv[1])]
for line in lines:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["ts"]), line
    assert line["level"] in ("debug", "info", "warning", "error") and line["msg"], line
requests = [l for l in lines if l["msg"] == "request"]
got = [(r["method"], r["path"], r["status"]) for r in requests]
want = [("POST", "/v1/chat/completions", 200), ("POST", "/v1/completions", 200),
        ("GET", "/v1/models", 401), ("POST", "/v1/chat/completions", 404),
        ("OPTIONS", "/v1/chat/completions", 204), ("OPTIONS", "/v1/chat/completions", 405),
        ("GET", "/v1/models", 200)]
assert got == want, got
chat, stream = requests[0], requests[1]
usage = json.load(open(sys.argv[2]))["usage"]
assert (chat["prompt_tokens"], chat["completion_tokens"]) == (
    usage["prompt_tokens"], usage["completion_tokens"]), (chat, usage)
reply = json.load(open(sys.argv[2]))
assert chat["finish_reason"] == reply["choices"][0]["finish_reason"], (chat, reply)
assert chat["model"] == reply["model"], (chat, reply)
assert chat["stream"] is False and stream["stream"] is True
events = [json.loads(l[6:]) for l in open(sys.argv[3]) if l.startswith("data: {")]
stream_usage = events[-1]["usage"]
assert (stream["prompt_tokens"], stream["completion_tokens"]) == (
    stream_usage["prompt_tokens"], stream_usage["completion_tokens"]), (stream, stream_usage)
for r in (chat, stream):
    assert r["completion_tokens"] == 0 or 0 <= r["ttft_ms"] <= r["duration_ms"], r
assert requests[2]["model"] == "-" and requests[2]["prompt_tokens"] == "-"
assert all(re.fullmatch(r"127\.0\.0\.1:\d+", r["client"]) for r in requests)
PY

[[ $fails == 0 ]] && echo "serve process e2e: all passed"
exit $fails
