#!/usr/bin/env bash
# The serving gates on the bundled trained model, as CI runs them: its MXFP4 export (`minimax
# quantize`) converted exactly to FP8 (`minimax convert`, checked by `minimax validate`); servers on
# the BF16 original, the MXFP4 export and the FP8 conversion; then
#   1. `minimax gates` on BF16 compared with FP8: every gate runs and is printed; the run fails on
#      the serving checks (loops, logprobs, prompt_logprobs), arithmetic and next-token agreement.
#      MXFP4's 4-bit weights are lossy on a model this narrow (hidden 128): measured on the current
#      checkpoint, agreement on decided positions 0.985 but the mean loss moves 0.074 nats (its
#      confident predictions make each flipped token expensive), and 1 golden answer of 10
#      differs; so the loss difference and identical greedy answers are reported, not required;
#   2. FP8 compared with MXFP4 — the exact conversion: agreement, loss and identical greedy answers
#      are all required, with the same serving and arithmetic gates.
# Golden prompts, needles and tool calls are printed but not required: the bundled model does not
# reach their thresholds yet (recall and multi-needle documents; its model card has the numbers).
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

# One compute thread each: the two servers share CI's two cores.
start_server "$WORK/bf16.log" "$MODEL" --served-model-name tiny --threads 1 --max-model-len 2048
BF16=http://127.0.0.1:$PORT
start_server "$WORK/fp8.log" "$WORK/fp8" --served-model-name tiny --threads 1 --max-model-len 2048
FP8=http://127.0.0.1:$PORT
start_server "$WORK/mxfp4.log" "$WORK/mxfp4" --served-model-name tiny --threads 1 \
  --max-model-len 2048
MXFP4=http://127.0.0.1:$PORT

status=0
echo "== gates: BF16 server, compared with the FP8 conversion of its MXFP4 export"
"$MINIMAX" gates --url "$BF16" --compare-url "$FP8" \
  --require "greedy loops,logprobs,prompt_logprobs,arithmetic,next-token agreement" |
  tee "$WORK/gates_bf16_vs_fp8.txt" || status=1
echo "== gates: FP8 server, compared with the MXFP4 checkpoint it was converted from"
"$MINIMAX" gates --url "$FP8" --compare-url "$MXFP4" --require "greedy loops,logprobs,\
prompt_logprobs,arithmetic,next-token agreement,mean loss difference,identical greedy answers" |
  tee "$WORK/gates_fp8_vs_mxfp4.txt" || status=1
exit $status
