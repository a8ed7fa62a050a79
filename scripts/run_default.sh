#!/usr/bin/env bash
# Installs dependencies, builds, and runs the main job on the bundled default model.
# Until a trained model ships (issue 6) the default model is the project's own tiny MiniMax-M3
# checkpoint, generated deterministically: it is exported as AMD Quark MXFP4, converted exactly
# to FP8 per channel, independently validated, and inspected.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$JOBS" minimax
MINIMAX=build/minimax
MODELS=${MODELS:-models}
mkdir -p "$MODELS"

if [[ ! -d "$MODELS/tiny-m3-mxfp4" ]]; then
  "$MINIMAX" make-tiny --arch m3 --format mxfp4 --seed 1 --output "$MODELS/tiny-m3-mxfp4"
fi
"$MINIMAX" convert --input "$MODELS/tiny-m3-mxfp4" --output "$MODELS/tiny-m3-fp8" --force
"$MINIMAX" validate --source "$MODELS/tiny-m3-mxfp4" --converted "$MODELS/tiny-m3-fp8"
"$MINIMAX" inspect "$MODELS/tiny-m3-fp8"
# The engine on the converted FP8 checkpoint (random weights until the trained model ships, so the
# text is not meaningful; the command shows the whole path: template, prefill, decode, timing).
"$MINIMAX" generate --model "$MODELS/tiny-m3-fp8" --chat --prompt "What is 12 + 35?" \
  --max-tokens 32 --temperature 0
