#!/usr/bin/env bash
# The serving gates on the bundled trained model, as CI runs them: its MXFP4 export (`minimax
# quantize`) converted exactly to FP8 (`minimax convert`, checked by `minimax validate`), one server
# on the BF16 original and one on the FP8 conversion, then `minimax gates` on the BF16 server
# compared against the FP8 one, and the single-server gates on the FP8 one. The tables go to
# stdout (CI's log) and to $WORK/gates_*.txt.
set -euo pipefail
MINIMAX=$1
WORK=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MODEL=$ROOT/models/minimax-m3-tiny
rm -rf "$WORK" && mkdir -p "$WORK"
if [[ ! -f $MODEL/config.json ]]; then
  echo "FAIL: the bundled model $MODEL is missing"
  exit 1
fi
source "$ROOT/scripts/lib/server.sh"
trap stop_servers EXIT

"$MINIMAX" quantize --input "$MODEL" --output "$WORK/mxfp4" --format mxfp4 >/dev/null
"$MINIMAX" convert --input "$WORK/mxfp4" --output "$WORK/fp8" >/dev/null
"$MINIMAX" validate --source "$WORK/mxfp4" --converted "$WORK/fp8" >/dev/null

# One compute thread each: the two servers share CI's two cores.
start_server "$WORK/bf16.log" "$MODEL" --served-model-name tiny --threads 1 --max-model-len 2048
BF16=http://127.0.0.1:$PORT
start_server "$WORK/fp8.log" "$WORK/fp8" --served-model-name tiny --threads 1 --max-model-len 2048
FP8=http://127.0.0.1:$PORT

status=0
echo "== gates: BF16 server, compared with the FP8 conversion of its MXFP4 export"
"$MINIMAX" gates --url "$BF16" --compare-url "$FP8" | tee "$WORK/gates_bf16_vs_fp8.txt" ||
  status=1
echo "== gates: FP8 server"
"$MINIMAX" gates --url "$FP8" | tee "$WORK/gates_fp8.txt" || status=1
exit $status
