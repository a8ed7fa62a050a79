#!/usr/bin/env bash
# End to end: a conversion killed after its first shard (the hidden --stop-after-shards testing
# aid: SIGKILL, no cleanup) leaves only DST.partial; --resume re-verifies the kept shard, finishes,
# and the result is byte-identical to an uninterrupted run. Files the resume manifest does not
# record (a shard of another checkpoint, a note) are removed and named; a recorded shard changed
# since is converted again; validate refuses a shard or a tensor the index does not account for.
# Usage: convert_resume.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
work=$2
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check
rm -rf "$work"
mkdir -p "$work"
"$bin" make-tiny --arch m3 --output "$work/src" --format mxfp4 >/dev/null 2>&1
"$bin" convert --input "$work/src" --output "$work/reference" --quiet >/dev/null

status=0
"$bin" convert --input "$work/src" --output "$work/dst" --quiet --stop-after-shards 1 \
  >/dev/null 2>"$work/killed.err" || status=$?
[[ $status -eq 137 ]] || fail "killed run: exit status $status, expected 137"
[[ ! -e "$work/dst" ]] || fail "a killed run left DST"
[[ -d "$work/dst.partial" ]] || fail "a killed run left no DST.partial"
shards=$(ls "$work/dst.partial" | grep -c '\.safetensors$' || true)
[[ $shards -eq 1 ]] || fail "DST.partial holds $shards finished shards, expected 1"

"$bin" convert --input "$work/src" --output "$work/dst" --resume --quiet >"$work/resume.log" ||
  fail "resume failed"
grep -q "1 written, 1 kept" "$work/resume.log" || fail "resume did not keep the shard: $(cat "$work/resume.log")"
[[ -d "$work/dst" && ! -e "$work/dst.partial" ]] || fail "resume did not rename into place"
diff -r "$work/reference" "$work/dst" >/dev/null || fail "resumed output differs from an uninterrupted run"
"$bin" validate --source "$work/src" --converted "$work/dst" >/dev/null || fail "validate after resume"

# Kills the conversion into $work/$1 after its first shard; prints the kept shard's name.
killed_run() {
  local status=0
  "$bin" convert --input "$work/src" --output "$work/$1" --quiet --stop-after-shards 1 \
    >/dev/null 2>/dev/null || status=$?
  [[ $status -eq 137 ]] || fail "killed run into $1: exit status $status, expected 137"
  ls "$work/$1.partial" | grep '\.safetensors$'
}

# Foreign files in DST.partial: removed, each named on stderr, absent from the output.
killed_run foreign >/dev/null
first_source_shard=$(ls "$work/src" | grep '\.safetensors$' | head -1)
cp "$work/src/$first_source_shard" "$work/foreign.partial/model-00009-of-00009.safetensors"
echo "not a checkpoint file" >"$work/foreign.partial/notes.txt"
"$bin" convert --input "$work/src" --output "$work/foreign" --resume --quiet \
  >"$work/foreign.log" 2>"$work/foreign.err" || fail "resume with foreign files failed"
grep -q "1 written, 1 kept" "$work/foreign.log" || fail "foreign: $(cat "$work/foreign.log")"
for name in model-00009-of-00009.safetensors notes.txt; do
  grep -q "$name: not recorded in the resume manifest; removed" "$work/foreign.err" ||
    fail "foreign: $name not named as removed: $(cat "$work/foreign.err")"
  [[ ! -e "$work/foreign/$name" ]] || fail "foreign: $name carried into the output"
done
diff -r "$work/reference" "$work/foreign" >/dev/null || fail "foreign: output differs from an uninterrupted run"
"$bin" validate --source "$work/src" --converted "$work/foreign" >/dev/null || fail "validate foreign"

# A recorded shard changed since (one byte flipped near its end): converted again.
kept=$(killed_run tampered)
python3 - "$work/tampered.partial/$kept" <<'PY'
import os, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(os.path.getsize(sys.argv[1]) - 3)
    byte = f.read(1)[0]
    f.seek(-1, 1)
    f.write(bytes([byte ^ 1]))
PY
"$bin" convert --input "$work/src" --output "$work/tampered" --resume --quiet \
  >"$work/tampered.log" 2>"$work/tampered.err" || fail "resume with a tampered shard failed"
grep -q "2 written, 0 kept from the interrupted run (re-verified), 1 redone" "$work/tampered.log" ||
  fail "tampered: $(cat "$work/tampered.log")"
grep -q "$kept: .*the resume manifest recorded" "$work/tampered.err" ||
  fail "tampered: $kept not named: $(cat "$work/tampered.err")"
diff -r "$work/reference" "$work/tampered" >/dev/null || fail "tampered: output differs from an uninterrupted run"

# validate: a shard the index does not list, then a tensor the index does not map.
cp -r "$work/dst" "$work/extra"
cp "$work/src/$first_source_shard" "$work/extra/model-00009-of-00009.safetensors"
status=0
"$bin" validate --source "$work/src" --converted "$work/extra" >"$work/extra.out" 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "validate accepted a shard the index does not list"
grep -q "model-00009-of-00009.safetensors: a .safetensors file that the checkpoint does not account for" \
  "$work/extra.out" || fail "validate extra shard: $(cat "$work/extra.out")"
rm -rf "$work/unmapped"
cp -r "$work/dst" "$work/unmapped"
dropped=$(python3 - "$work/unmapped/model.safetensors.index.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    index = json.load(f)
name = sorted(index["weight_map"])[0]
del index["weight_map"][name]
with open(sys.argv[1], "w") as f:
    json.dump(index, f)
print(name)
PY
)
status=0
"$bin" validate --source "$work/src" --converted "$work/unmapped" >"$work/unmapped.out" 2>&1 || status=$?
[[ $status -ne 0 ]] || fail "validate accepted a tensor the index does not map"
grep -q "'$dropped' in .* is missing from the index" "$work/unmapped.out" ||
  fail "validate unmapped tensor: $(cat "$work/unmapped.out")"
echo "convert_resume: ok"
