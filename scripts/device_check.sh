#!/usr/bin/env bash
# The CUDA backend's check on a Hopper host (docs/cuda.md), in two steps:
#
#   scripts/device_check.sh pack BUILD_DIR PACK_DIR   # here: binaries, models and the shared
#                                                     # libraries they need (not the driver's,
#                                                     # not glibc's) into PACK_DIR
#   scripts/device_check.sh run PACK_DIR OUT_DIR      # there: every stage, each one's output in
#                                                     # OUT_DIR as it finishes, a table at the end
#
# Stages: the GPU's name; the op table on the cuda backend against the reference; logits of tiny
# M2 and M3 (bf16, fp8-block) on cuda against cpu at f32 (2e-4); greedy tokens of the bundled
# model on both. A stage that fails is reported and the next one still runs.
set -uo pipefail

pack() {
  local build=$1 dir=$2
  rm -rf "$dir" && mkdir -p "$dir/lib" "$dir/models"
  cp "$build/minimax" "$build/tests/test_backend_ops" "$dir/"
  for bin in "$dir/minimax" "$dir/test_backend_ops"; do
    ldd "$bin" | awk '/=> \// {print $3}' | while read -r lib; do
      case $(basename "$lib") in
        libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libcuda.so*) ;;
        *) cp -nL "$lib" "$dir/lib/" ;;
      esac
    done
  done
  cp -r "$(dirname "$0")/../models/minimax-m3-tiny" "$dir/models/"
  for arch in m2 m3; do
    "$dir/minimax" make-tiny --arch "$arch" --output "$dir/models/$arch-bf16" >/dev/null
    "$dir/minimax" quantize --input "$dir/models/$arch-bf16" --output "$dir/models/$arch-fp8-block" \
      --format fp8-block >/dev/null
  done
  du -sh "$dir"
}

run() {
  local dir=$1 out=$2
  mkdir -p "$out"
  export LD_LIBRARY_PATH="$dir/lib:${LD_LIBRARY_PATH:-}"
  local table="$out/table.md"
  echo "| stage | result |" >"$table"
  echo "|---|---|" >>"$table"
  stage() {  # name, command...
    local name=$1
    shift
    local start=$SECONDS
    if "$@" >"$out/$name.log" 2>&1; then
      echo "| $name | ok ($((SECONDS - start)) s) |" >>"$table"
    else
      echo "| $name | FAILED ($((SECONDS - start)) s): $(tail -n 3 "$out/$name.log" | tr '\n' ' ') |" \
        >>"$table"
    fi
  }
  stage gpu nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  stage op_table "$dir/test_backend_ops" --backend cuda --show-error
  local tokens
  tokens=$(seq -s, 1 160)
  for model in m2-bf16 m2-fp8-block m3-bf16 m3-fp8-block; do
    for backend in cpu cuda; do
      stage "logits_${model}_$backend" "$dir/minimax" logits --model "$dir/models/$model" \
        --tokens "$tokens" --all-positions --activations f32 --kv-cache-dtype f32 \
        --backend "$backend" --quiet --output "$out/$model.$backend.npy"
    done
    stage "compare_$model" python3 - "$out/$model.cpu.npy" "$out/$model.cuda.npy" <<'PY'
import array, sys
def load(path):
    raw = open(path, "rb").read()
    values = array.array("f")
    values.frombytes(raw[10 + int.from_bytes(raw[8:10], "little"):])
    return values
a, b = map(load, sys.argv[1:])
worst = max(abs(x - y) for x, y in zip(a, b))
print(f"max |logit difference| {worst:.3g} over {len(a)} logits")
sys.exit(len(a) != len(b) or not worst <= 2e-4)
PY
  done
  for backend in cpu cuda; do
    stage "greedy_$backend" "$dir/minimax" generate --model "$dir/models/minimax-m3-tiny" \
      --prompt "Sort these numbers: 5 3 9 1" --max-tokens 32 --temperature 0 --backend "$backend"
  done
  stage greedy_compare cmp "$out/greedy_cpu.log" "$out/greedy_cuda.log"
  cat "$table"
}

case ${1:-} in
  pack) pack "$2" "$3" ;;
  run) run "$2" "$3" ;;
  *)
    echo "usage: $0 pack BUILD_DIR PACK_DIR | run PACK_DIR OUT_DIR" >&2
    exit 2
    ;;
esac
