#!/usr/bin/env bash
# End to end: corrupted sources (a scale byte flipped to 0xFF, a truncated shard, a bad header)
# stop convert with a clear message and leave neither DST nor DST.partial; an existing DST is
# refused without --force and replaced with it.
# Usage: convert_failures.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
work=$2
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check
rm -rf "$work"
mkdir -p "$work"
"$bin" make-tiny --arch m2 --output "$work/src" --format mxfp4 >/dev/null 2>&1
shard=model-00001-of-00002.safetensors

# expect_failure NAME SOURCE_DIR TEXT...: convert fails with status 1, its message holds every
# TEXT, and nothing is left at the output path.
expect_failure() {
  local name=$1 src=$2
  shift 2
  local status=0
  "$bin" convert --input "$src" --output "$work/out-$name" --quiet >/dev/null 2>"$work/$name.err" ||
    status=$?
  [[ $status -eq 1 ]] || fail "$name: exit status $status, expected 1"
  for text in "$@"; do
    grep -qF -- "$text" "$work/$name.err" || fail "$name: message lacks '$text': $(cat "$work/$name.err")"
  done
  [[ ! -e "$work/out-$name" && ! -e "$work/out-$name.partial" ]] || fail "$name: output left behind"
}

# A scale byte of an expert set to 0xFF (the e8m0 NaN): offset found from the shard header.
cp -r "$work/src" "$work/nan"
tensor=$(python3 - "$work/nan/$shard" <<'PY'
import json, struct, sys
path = sys.argv[1]
with open(path, "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    name = sorted(k for k in header if k.endswith("experts.3.w2.weight_scale"))[0]
    begin = header[name]["data_offsets"][0]
    f.seek(8 + n + begin + 5)
    f.write(b"\xff")
    print(name)
PY
)
expect_failure nan "$work/nan" "$tensor" "row 5 block 0" "0xFF"

cp -r "$work/src" "$work/truncated"
truncate -s -64 "$work/truncated/$shard"
expect_failure truncated "$work/truncated" "$shard"

cp -r "$work/src" "$work/header"
printf 'X' | dd of="$work/header/$shard" bs=1 seek=8 conv=notrunc status=none
expect_failure header "$work/header" "$shard"

# An existing output directory.
mkdir -p "$work/taken"
echo mine >"$work/taken/keep.txt"
status=0
"$bin" convert --input "$work/src" --output "$work/taken" --quiet >/dev/null 2>"$work/taken.err" ||
  status=$?
[[ $status -eq 1 ]] || fail "existing DST: exit status $status"
grep -q "already exists" "$work/taken.err" || fail "existing DST: $(cat "$work/taken.err")"
[[ "$(cat "$work/taken/keep.txt")" == mine ]] || fail "existing DST was touched"
"$bin" convert --input "$work/src" --output "$work/taken" --force --quiet >/dev/null ||
  fail "--force did not replace DST"
[[ -f "$work/taken/config.json" && ! -e "$work/taken/keep.txt" ]] || fail "--force left old files"
echo "convert_failures: ok"
