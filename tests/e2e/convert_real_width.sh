#!/usr/bin/env bash
# ctest: slow
# `convert` and `validate` at real width (issue 19 item 3): the M3 slice of 4 layers in MXFP4
# (hidden 6144, 128 experts, vocabulary 200,064; about 10 GiB in 3 shards, 13.5 GiB out).
#  - convert passes its own float64 check; its peak RSS stays under 256 MiB (flat, not the
#    checkpoint's size);
#  - validate passes, and fails naming the tensor once one byte of the routed expert stored last
#    in the largest shard (offset past 2^32) is flipped;
#  - a conversion SIGKILLed from outside once its first shard is recorded, then run again with
#    --resume, gives files whose sha256 all equal the uninterrupted run's.
# Usage: convert_real_width.sh MINIMAX [SCRATCH]. The slice is made with make-tiny under
# $MINIMAX_CONVERT_REAL_WIDTH_DIR (default /tmp/minimax-convert-real-width), or an existing one is
# read (never written) from $MINIMAX_CONVERT_SLICE. Everything written is removed at the end; one
# output exists at a time. Exit 77 (skipped) when the disk lacks room.
set -euo pipefail
MINIMAX=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${MINIMAX_CONVERT_REAL_WIDTH_DIR:-/tmp/minimax-convert-real-width}
THREADS=${MINIMAX_REAL_WIDTH_THREADS:-2}
SRC=${MINIMAX_CONVERT_SLICE:-$BASE/src}
OUT=$BASE/out
converting=
cleanup() {
  [[ -n $converting ]] && kill -9 "$converting" 2>/dev/null
  rm -rf "$BASE"
}
trap cleanup EXIT
rm -rf "$BASE" && mkdir -p "$BASE"

need_gb=15  # one output (13.5 GiB) and some room
[[ -z ${MINIMAX_CONVERT_SLICE:-} ]] && need_gb=25  # and the slice (10.3 GiB)
free_gb=$(df --output=avail -BG "$BASE" | tail -1 | tr -dc 0-9)
if ((free_gb < need_gb)); then
  echo "skipped: $free_gb GiB free under $BASE, need $need_gb"
  exit 77
fi
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check
if [[ -z ${MINIMAX_CONVERT_SLICE:-} ]]; then
  start=$SECONDS
  "$MINIMAX" make-tiny --hf-config "$ROOT/tests/data/configs/m3_mxfp4/config.json" --layers 4 \
    --format mxfp4 --threads "$THREADS" --output "$SRC" >"$BASE/make-tiny.log" 2>&1 ||
    fail "make-tiny: $(cat "$BASE/make-tiny.log")"
  echo "make-tiny took $((SECONDS - start)) s"
fi
shards=("$SRC"/*.safetensors)
echo "source: $(du -sh "$SRC" | cut -f1) in ${#shards[@]} shards"

# 1. An uninterrupted conversion, its memory, and the two checks.
start=$SECONDS
# Runs convert, printing its peak RSS in MiB (getrusage of the child).
python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:], stdout=open(sys.argv[1], "w"))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
sys.exit(rc)' "$BASE/convert.log" "$MINIMAX" convert --input "$SRC" --output "$OUT" \
  --threads "$THREADS" --quiet >"$BASE/rss_mib" || fail "convert: $(cat "$BASE/convert.log")"
cat "$BASE/convert.log"
rss_mib=$(cat "$BASE/rss_mib")
echo "convert took $((SECONDS - start)) s, peak RSS $rss_mib MiB"
((rss_mib < 256)) || fail "convert's peak RSS is $rss_mib MiB, expected a flat ceiling under 256"

"$MINIMAX" validate --source "$SRC" --converted "$OUT" --threads "$THREADS" --quiet \
  >"$BASE/validate.log" || fail "validate: $(cat "$BASE/validate.log")"
grep -q "result           OK" "$BASE/validate.log" || fail "validate: $(cat "$BASE/validate.log")"

# flip_last_expert SHARD: xor 1 into the middle byte of the routed expert stored last; prints its
# name. Run twice, it restores the file.
flip_last_expert() {
  python3 - "$1" <<'EOF'
import json, struct, sys
with open(sys.argv[1], "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    (begin, end), name = max((v["data_offsets"], k) for k, v in header.items()
                             if ".experts." in k and k.endswith(".weight"))
    at = 8 + n + (begin + end) // 2
    f.seek(at)
    byte = f.read(1)[0]
    f.seek(at)
    f.write(bytes([byte ^ 1]))
    print(name)
EOF
}
largest=$(ls -S "$OUT"/*.safetensors | head -1)
flipped=$(flip_last_expert "$largest")
status=0
"$MINIMAX" validate --source "$SRC" --converted "$OUT" --threads "$THREADS" --quiet \
  >"$BASE/flipped.log" || status=$?
[[ $status -eq 1 ]] || fail "validate of a flipped byte: exit $status, expected 1"
grep -q "$flipped row .* != MXFP4 source" "$BASE/flipped.log" ||
  fail "validate did not name $flipped: $(cat "$BASE/flipped.log")"
echo "ok   a flipped byte in $flipped is caught"
flip_last_expert "$largest" >/dev/null

# 2. Kill and resume, against the uninterrupted run's checksums (the output itself is removed
# first: one output on disk at a time).
(cd "$OUT" && sha256sum -- * >"$BASE/reference.sha256")
rm -rf "$OUT"
"$MINIMAX" convert --input "$SRC" --output "$OUT" --threads "$THREADS" --quiet \
  >"$BASE/killed.log" 2>&1 &
converting=$!
# A finished shard is one the resume manifest records (it has its final name and was hashed);
# one killed before that is converted again by --resume, like any file the manifest does not name.
manifest_records_a_shard() {
  python3 -c 'import json, sys; sys.exit(0 if json.load(open(sys.argv[1]))["shards"] else 1)' \
    "$OUT.partial/minimax-convert-manifest.json" 2>/dev/null
}
while ! manifest_records_a_shard; do
  kill -0 "$converting" 2>/dev/null || fail "convert ended before a shard was finished"
  sleep 0.1
done
kill -9 "$converting"
status=0
wait "$converting" || status=$?
converting=
[[ $status -eq 137 ]] || fail "killed run: exit status $status, expected 137"
[[ ! -e "$OUT" && -d "$OUT.partial" ]] || fail "a killed run must leave only $OUT.partial"
echo "killed with $(ls "$OUT.partial" | tr '\n' ' ')in $OUT.partial"

"$MINIMAX" convert --input "$SRC" --output "$OUT" --threads "$THREADS" --resume --quiet \
  >"$BASE/resume.log" || fail "resume: $(cat "$BASE/resume.log")"
grep "shards" "$BASE/resume.log"
grep -Eq "shards +[0-9]+ written, [1-9][0-9]* kept from the interrupted run \(re-verified\), 0 redone" \
  "$BASE/resume.log" || fail "resume kept no shard: $(cat "$BASE/resume.log")"
[[ -d "$OUT" && ! -e "$OUT.partial" ]] || fail "resume did not rename into place"
(cd "$OUT" && sha256sum --quiet -c "$BASE/reference.sha256") ||
  fail "the resumed output differs from the uninterrupted run"
[[ $(ls "$OUT" | wc -l) -eq $(wc -l <"$BASE/reference.sha256") ]] || fail "extra files after resume"
echo "ok   SIGKILL after the first finished shard + --resume: every file's sha256 equals the uninterrupted run's"
echo "convert_real_width: ok"
