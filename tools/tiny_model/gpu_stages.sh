#!/bin/bash
# Curriculum stages 9-10 on one GPU, several variants side by side inside a fixed wall-clock
# budget (one short lease of a GPU machine). Each variant starts from INIT (stage 8's weights):
#
#   9.  recall only (optional), MSA: recall is learnt within ~600 steps, the rest is forgotten;
#   10. the stage-8 mixture (or a variant of it), MSA throughout, until the budget ends: the
#       other tasks come back.
#
#   gpu_stages.sh WORK INIT OUT SECONDS
#
# WORK holds train.npz / heldout.npz / tokenizer.json (train.py data). Stage 10 fixes its step
# count after a short calibration so that its cosine schedule ends inside the budget; its log
# records the count (train.py train --steps N reproduces it). Weights go to OUT/<variant>.npz,
# all logs to OUT/logs.tgz (a lease brings back at most 8 files). A variant that dies in its first minute is reported at once; if all
# died the script stops there, so a broken setup costs one minute.
set -u
work=$1 init=$2 out=$3 seconds=$4
here=$(dirname "$0")
py=${PYTHON:-python3}
mkdir -p "$out/logs"
export PYTHONUNBUFFERED=1
end=$(($(date +%s) + seconds))
steps9=${STEPS9:-600}
mix="arithmetic:3,recall:4,needle:3,copy,tool"  # stage 8's mixture
common=(--log-every 100 --save-every 30 --sparse-from 0 --threads 1 ${EXTRA:-})

# name | stage 9 flags ("-" for none) | stage 10 flags
variants=(
  "A|--budget 2048 --lr 2e-3|--budget 2048 --lr 1e-3 --tasks $mix"
  "B|--budget 2048 --lr 2e-3|--budget 8192 --lr 1.5e-3 --tasks $mix"
  "C|-|--budget 8192 --lr 1.5e-3 --tasks arithmetic:3,recall:6,needle:3,copy,tool"
  "D|--budget 2048 --lr 2e-3|--budget 8192 --lr 1.5e-3 --tasks arithmetic:3,recall:4,needle:5,copy,tool:2"
  "E|--budget 8192 --lr 2e-3|--budget 8192 --lr 1e-3 --tasks $mix"
  "F|--budget 2048 --lr 2e-3|--budget 16384 --lr 2e-3 --tasks $mix"
)

run_variant() {  # name stage9-flags stage10-flags
  local name=$1 s9=$2 s10=$3 start=$init
  if [ "$s9" != "-" ]; then
    # shellcheck disable=SC2086
    $py "$here/train.py" train --work "$work" --out "/tmp/gpu-$name-9" --init "$init" \
      --tasks recall --steps "$steps9" --evals 3 --export-model "/tmp/gpu-$name-9.npz" \
      "${common[@]}" $s9 >"$out/logs/$name-9.log" 2>&1 || return 1
    start=/tmp/gpu-$name-9.npz
  fi
  local left=$((end - $(date +%s) - 15))
  # shellcheck disable=SC2086
  $py "$here/train.py" train --work "$work" --out "/tmp/gpu-$name-10" --init "$start" \
    --time-budget "$left" --evals 8 --export-model "$out/$name.npz" "${common[@]}" $s10 \
    >"$out/logs/$name-10.log" 2>&1
}

pids=() names=()
for entry in "${variants[@]}"; do
  IFS='|' read -r name s9 s10 <<<"$entry"
  if [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
  run_variant "$name" "$s9" "$s10" &
  pids+=($!) names+=("$name")
done

sleep "${WAIT:-60}"
alive=0
for i in "${!pids[@]}"; do
  if kill -0 "${pids[$i]}" 2>/dev/null; then
    alive=$((alive + 1))
  else
    echo "== ${names[$i]} ended early:"; tail -5 "$out/logs/${names[$i]}"-*.log
  fi
done
if [ "$alive" = 0 ]; then echo "every variant ended early"; exit 1; fi
for name in "${names[@]}"; do
  echo "== $name: $(grep -h -m1 '^device' "$out/logs/$name"-*.log | head -1)"
  grep -h "^step" "$out/logs/$name"-*.log | tail -1
done

status=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || status=1; done
for name in "${names[@]}"; do
  echo "== $name"
  grep -h -E "^(calibrated|stopped)" "$out/logs/$name"-*.log
  grep -h "^heldout" "$out/logs/$name-10.log" | tail -3
done
tar czf "$out/logs.tgz" -C "$out" logs && rm -rf "$out/logs"
exit $status
