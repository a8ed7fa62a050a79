#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the bundled default model: the trained
# tiny MiniMax-M3 in models/minimax-m3-tiny (BF16) is exported as MXFP4 (`minimax quantize`),
# converted exactly to FP8 (`minimax convert`), independently validated, and served with the
# OpenAI-compatible API on http://127.0.0.1:${PORT:-8000}. One chat request is sent to show the
# reasoning / content split; then the server keeps running until Ctrl-C (MINIMAX_DEMO_ONLY=1 stops
# it after the request).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$JOBS" minimax
MINIMAX=build/minimax
OUT=${OUT:-out}
MODEL=models/minimax-m3-tiny
mkdir -p "$OUT"

"$MINIMAX" quantize --input "$MODEL" --output "$OUT/minimax-m3-tiny-mxfp4" --format mxfp4 --force
"$MINIMAX" convert --input "$OUT/minimax-m3-tiny-mxfp4" --output "$OUT/minimax-m3-tiny-fp8" --force
"$MINIMAX" validate --source "$OUT/minimax-m3-tiny-mxfp4" --converted "$OUT/minimax-m3-tiny-fp8"

source scripts/lib/server.sh
trap stop_servers EXIT
PORT_WANTED=${PORT:-8000}
"$MINIMAX" serve --model "$OUT/minimax-m3-tiny-fp8" --served-model-name minimax-m3-tiny \
  --port "$PORT_WANTED" &
SERVER_PIDS+=($!)
until curl -sf "http://127.0.0.1:$PORT_WANTED/health" >/dev/null; do
  kill -0 "${SERVER_PIDS[0]}" 2>/dev/null || exit 1
  sleep 0.2
done
echo "== POST /v1/chat/completions"
curl -s "http://127.0.0.1:$PORT_WANTED/v1/chat/completions" -H "Content-Type: application/json" \
  -d '{"model": "minimax-m3-tiny", "temperature": 0,
       "messages": [{"role": "user", "content": "What is 347 + 285?"}]}'
echo
if [[ ${MINIMAX_DEMO_ONLY:-0} == 1 ]]; then exit 0; fi
echo "== serving the FP8 model on http://127.0.0.1:$PORT_WANTED (Ctrl-C stops)"
wait "${SERVER_PIDS[0]}"
