#!/usr/bin/env bash
# Each parallel mode against one process (tests/mpi/parallel_check.cc): M2 and M3 in bf16,
# fp8-block and mxfp4, one mpirun launch per mode, one thread per rank; TP_EP on M3 also at 4
# ranks (more ranks than M3's 2 KV heads, so KV heads are copied). Then the layouts that must be
# refused before any weight is read.
# $1 = minimax, $2 = parallel_check, $3 = scratch dir.
set -euo pipefail
MINIMAX=$1
CHECK=$2
WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
# Containers often forbid the cross-process memory copy Open MPI's shared-memory transport tries
# first; the tests do not need it.
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to none
  --mca btl_vader_single_copy_mechanism none)

source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check

dirs=()
for arch in m2 m3; do
  for format in bf16 fp8-block mxfp4; do
    "$MINIMAX" make-tiny --arch "$arch" --shape parallel --format "$format" \
      --output "$WORK/$arch-$format" >/dev/null
    dirs+=("$WORK/$arch-$format")
  done
done

echo "== TP_TP, 2 ranks"
"${MPIRUN[@]}" -n 2 "$CHECK" --tensor-parallel-size 2 "${dirs[@]}"
echo "== TP_EP, 2 ranks"
"${MPIRUN[@]}" -n 2 "$CHECK" --tensor-parallel-size 2 --enable-expert-parallel "${dirs[@]}"
echo "== DP_EP, 2 ranks"
"${MPIRUN[@]}" -n 2 "$CHECK" --data-parallel-size 2 --enable-expert-parallel "${dirs[@]}"
echo "== TP_TP, 2 ranks, bf16 and fp8_e4m3 KV caches (each rank's mirrored pool has the type)"
"${MPIRUN[@]}" -n 2 "$CHECK" --tensor-parallel-size 2 --kv-cache-dtype bf16 \
  "$WORK/m2-bf16" "$WORK/m3-bf16"
"${MPIRUN[@]}" -n 2 "$CHECK" --data-parallel-size 2 --enable-expert-parallel \
  --kv-cache-dtype fp8_e4m3 "$WORK/m3-bf16"
echo "== TP_EP, 4 ranks, M3"
"${MPIRUN[@]}" -n 4 "$CHECK" --tensor-parallel-size 4 --enable-expert-parallel \
  "$WORK/m3-bf16" "$WORK/m3-fp8-block"

# Refusals: each names what is wrong, and comes before the weights are read.
refused() {  # expected-message-part, mpirun ranks, minimax args...
  local want=$1 n=$2
  shift 2
  if "${MPIRUN[@]}" -n "$n" "$MINIMAX" logits --threads 1 --tokens 1,2,3 \
      --output "$WORK/refused.npy" "$@" > "$WORK/refused.log" 2>&1; then
    fail "accepted: $*"
  fi
  grep -q -- "$want" "$WORK/refused.log" || { cat "$WORK/refused.log"; fail "no '$want' for: $*"; }
  [[ ! -e "$WORK/refused.npy" ]] || fail "output written for: $*"
}
echo "== refusals"
refused "3 ranks, but 2 were started" 2 --model "$WORK/m2-bf16" --tensor-parallel-size 3
refused "attention heads do not divide among 3 ranks" 3 --model "$WORK/m2-bf16" --tensor-parallel-size 3
refused "experts do not divide among 3 ranks" 3 --model "$WORK/m2-bf16" --data-parallel-size 3 \
  --enable-expert-parallel
refused "needs --enable-expert-parallel" 2 --model "$WORK/m2-bf16" --data-parallel-size 2
# The tiny shape's experts are 32 wide: halves cut through MXFP4's 32-wide scale blocks. Both
# ranks' cuts are wrong and either may report first, so either half is the right message.
"$MINIMAX" make-tiny --arch m2 --format mxfp4 --output "$WORK/m2-tiny-mxfp4" >/dev/null
refused "w2.weight: columns \[\(0, 16\|16, 32\)) do not start and end on the mxfp4 block of 32" 2 \
  --model "$WORK/m2-tiny-mxfp4" --tensor-parallel-size 2
# Another checkpoint on one rank (same shapes, other config.json).
cp -r "$WORK/m2-bf16" "$WORK/m2-other"
sed -i 's/"rope_theta": 5000000/"rope_theta": 10000/' "$WORK/m2-other/config.json"
refused "rank(s) 1 differ from rank 0 in the checkpoint's config.json" 1 \
  --model "$WORK/m2-bf16" --tensor-parallel-size 2 : -n 1 "$MINIMAX" logits --threads 1 \
  --tokens 1,2,3 --output "$WORK/refused.npy" --model "$WORK/m2-other" --tensor-parallel-size 2
echo "all parallel checks passed"
