#!/usr/bin/env bash
# The serving gates on the bundled trained model, as CI runs them: its MXFP4 export (`minimax
# quantize`) converted exactly to FP8 (`minimax convert`, checked by `minimax validate`); servers on
# the BF16 original, the MXFP4 export and the FP8 conversion; then `minimax gates` on
#   1. BF16 compared with FP8: MXFP4's 4-bit weights are lossy, so this pair measures what the
#      quantization costs (on the committed checkpoint: next-token agreement 0.987 on decided
#      positions, mean loss difference 0.027 nats, every golden answer identical);
#   2. FP8 compared with MXFP4: the exact conversion, so agreement must be 1 and the loss equal.
# Every gate is required on both pairs (golden prompts, loops, needles, arithmetic, logprobs,
# prompt_logprobs, tool calls, agreement, loss, identical greedy answers): a model or a serving
# path that got any of them wrong fails CI.
# The tables go to stdout (CI's log) and to $WORK/gates_*.txt.
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

# One compute thread each: the two servers share CI's two cores. f32 activations on all three: the
# pairs measure the weights (the figures above are f32 ones), so a change of the default
# --activations must not move them (with auto = bf16x2 they were measured passing as well: pair 1
# agreement 0.984 and 0.026 nats, pair 2 1.0000 and 0.0000).
start_server "$WORK/bf16.log" "$MODEL" --served-model-name tiny --threads 1 --max-model-len 2048 \
  --activations f32
BF16=http://127.0.0.1:$PORT
start_server "$WORK/fp8.log" "$WORK/fp8" --served-model-name tiny --threads 1 --max-model-len 2048 \
  --activations f32
FP8=http://127.0.0.1:$PORT
start_server "$WORK/mxfp4.log" "$WORK/mxfp4" --served-model-name tiny --threads 1 \
  --max-model-len 2048 --activations f32
MXFP4=http://127.0.0.1:$PORT

status=0
echo "== gates: BF16 server, compared with the FP8 conversion of its MXFP4 export"
"$MINIMAX" gates --url "$BF16" --compare-url "$FP8" |
  tee "$WORK/gates_bf16_vs_fp8.txt" || status=1
echo "== gates: FP8 server, compared with the MXFP4 checkpoint it was converted from"
"$MINIMAX" gates --url "$FP8" --compare-url "$MXFP4" |
  tee "$WORK/gates_fp8_vs_mxfp4.txt" || status=1
exit $status
