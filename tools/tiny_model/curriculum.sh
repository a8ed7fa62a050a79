#!/bin/bash
# The bundled tiny model's training recipe: ten stages, each starting from the weights of the
# one before (train.py train --init).
#
#   curriculum.sh WORK OUT [SCALE]
#
#   1. copy only, dense attention: the model first learns to copy text out of the prompt
#      (trained on the whole mixture from the start, it learns the output formats and then sits
#      on a plateau where copy accuracy stays near 0.25 per token: measured, docs in the card);
#   2. copy twice as often as recall, dense: the copying circuit strengthens;
#   3. every task (copy and recall twice as often), sparse attention (MSA) from half way;
#   4. the same with MSA throughout, at half the learning rate (a second, shorter cosine);
#   5. lookup: needle documents of at most 200 tokens and recall three times each, dense: the
#      model starts finding needles (stages 1-4 never did: 0/30 at every length);
#   6. arithmetic only, dense: the digit sums (until here always predicted as "1") are learnt
#      within ~400 steps, and the other tasks are forgotten for a while;
#   7. every task (arithmetic, recall and needles three times), MSA from half way: the other
#      tasks come back and arithmetic stays;
#   8. the same, recall four times, MSA throughout, lr 1e-3;
#   9. recall only, MSA: recall (3/30 until here) reaches 30/30 within 600 steps, and the other
#      tasks are forgotten for a while;
#  10. stage 8's mixture in batches four times larger (8,192 padded tokens), lr 1.5e-3, MSA: the
#      other tasks come back and recall stays. Stages 9-10 of the committed model ran on an H200
#      (tools/tiny_model/gpu_stages.sh, variant B); on this 2-core machine stage 10 takes about an
#      hour (about 4 s per step).
#
# WORK holds train.npz / heldout.npz (train.py data); SCALE multiplies every stage's step count
# (1 = the CPU run of the model card). Each stage's log, state and weights go to OUT/<stage>.
set -euo pipefail
work=$1 out=$2 scale=${3:-1}
here=$(dirname "$0")
py=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
steps() { echo $(($1 * scale)); }
common=(--work "$work" --budget 2048 --log-every 50 --threads "${THREADS:-2}")

$py "$here/train.py" train "${common[@]}" --out "$out/1-copy" --steps "$(steps 300)" \
  --tasks copy --sparse-from 1.0 --lr 3e-3 --evals 6 \
  --export-model "$out/1-copy.npz" | tee "$out/1-copy.log"
$py "$here/train.py" train "${common[@]}" --out "$out/2-copy-recall" --steps "$(steps 600)" \
  --init "$out/1-copy.npz" --tasks copy:2,recall --sparse-from 1.0 --lr 3e-3 --evals 6 \
  --export-model "$out/2-copy-recall.npz" | tee "$out/2-copy-recall.log"
$py "$here/train.py" train "${common[@]}" --out "$out/3-all" --steps "$(steps 3000)" \
  --init "$out/2-copy-recall.npz" --tasks copy:2,recall:2,arithmetic,tool,needle \
  --sparse-from 0.5 --lr 2e-3 --evals 12 --export-model "$out/3-all.npz" | tee "$out/3-all.log"
$py "$here/train.py" train "${common[@]}" --out "$out/4-all" --steps "$(steps 600)" \
  --init "$out/3-all.npz" --tasks copy:2,recall:2,arithmetic,tool,needle \
  --sparse-from 0 --lr 1e-3 --evals 3 --export-model "$out/4-all.npz" | tee "$out/4-all.log"
$py "$here/train.py" train "${common[@]}" --out "$out/5-lookup" --steps "$(steps 1000)" \
  --init "$out/4-all.npz" --tasks recall:3,needle:3:200,copy,arithmetic,tool \
  --sparse-from 1.0 --lr 2e-3 --evals 10 --export-model "$out/5-lookup.npz" |
  tee "$out/5-lookup.log"
$py "$here/train.py" train "${common[@]}" --out "$out/6-arithmetic" --steps "$(steps 800)" \
  --init "$out/5-lookup.npz" --tasks arithmetic --sparse-from 1.0 --lr 2e-3 --evals 8 \
  --export-model "$out/6-arithmetic.npz" | tee "$out/6-arithmetic.log"
$py "$here/train.py" train "${common[@]}" --out "$out/7-all" --steps "$(steps 1500)" \
  --init "$out/6-arithmetic.npz" --tasks arithmetic:3,recall:3,needle:3,copy,tool \
  --sparse-from 0.5 --lr 1.5e-3 --evals 10 --export-model "$out/7-all.npz" | tee "$out/7-all.log"
$py "$here/train.py" train "${common[@]}" --out "$out/8-all" --steps "$(steps 3075)" \
  --init "$out/7-all.npz" --tasks arithmetic:3,recall:4,needle:3,copy,tool \
  --sparse-from 0 --lr 1e-3 --evals 12 --export-model "$out/8-all.npz" | tee "$out/8-all.log"
$py "$here/train.py" train "${common[@]}" --out "$out/9-recall" --steps "$(steps 600)" \
  --init "$out/8-all.npz" --tasks recall --sparse-from 0 --lr 2e-3 --evals 3 \
  --export-model "$out/9-recall.npz" | tee "$out/9-recall.log"
$py "$here/train.py" train "${common[@]}" --out "$out/10-all" --steps "$(steps 940)" \
  --init "$out/9-recall.npz" --tasks arithmetic:3,recall:4,needle:3,copy,tool --budget 8192 \
  --sparse-from 0 --lr 1.5e-3 --evals 8 --export-model "$out/10-all.npz" | tee "$out/10-all.log"
