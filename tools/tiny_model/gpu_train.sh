#!/bin/bash
# Trains several tiny-model configurations side by side on one GPU inside a fixed wall-clock
# budget (one short lease of a GPU machine), each writing its log and its weights to OUT.
#
#   gpu_train.sh WORK OUT SECONDS
#
# WORK holds train.npz and heldout.npz (train.py data). Each run fixes its step count after a
# short calibration so that its cosine schedule ends inside SECONDS; its log records the count
# (train.py train --steps N reproduces the run). A run that dies in its first minute is reported
# at once; if every run died the script stops there, so a broken setup costs one minute.
set -u
work=$1 out=$2 seconds=$3
here=$(dirname "$0")
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

# name: the arguments that differ (shape, learning rate, padded tokens per batch)
configs=(
  "h128:--hidden 128 --layers 4 --heads 4 --lr 3e-3 --budget 16384"
  "h128b8k:--hidden 128 --layers 4 --heads 4 --lr 2e-3 --budget 8192"
  "h128l6:--hidden 128 --layers 6 --heads 4 --lr 3e-3 --budget 16384"
  "h192:--hidden 192 --layers 4 --heads 6 --lr 2e-3 --budget 16384"
)
pids=()
for entry in "${configs[@]}"; do
  name=${entry%%:*} flags=${entry#*:}
  # shellcheck disable=SC2086
  $py "$here/train.py" train --work "$work" --out "/tmp/run-$name" --time-budget "$seconds" \
    --prefix-grad --export-model "$out/$name.npz" --log-every 100 $flags ${EXTRA:-} \
    >"$out/$name.log" 2>&1 &
  pids+=($!)
done

sleep ${WAIT:-75}
alive=0
for i in "${!pids[@]}"; do
  name=${configs[$i]%%:*}
  if kill -0 "${pids[$i]}" 2>/dev/null; then
    alive=$((alive + 1))
  else
    echo "== $name died early:"; tail -20 "$out/$name.log"
  fi
done
if [ "$alive" = 0 ]; then echo "every run died"; exit 1; fi
for name in "${configs[@]%%:*}"; do echo "== $name: $(grep -m1 calibrated "$out/$name.log")"; done

status=0
for i in "${!pids[@]}"; do wait "${pids[$i]}" || status=1; done
for name in "${configs[@]%%:*}"; do
  echo "== $name"
  grep -E "^(device|calibrated|stopped)" "$out/$name.log"
  grep "^step" "$out/$name.log" | tail -2
  grep "^heldout" "$out/$name.log" | tail -3
done
exit $status
