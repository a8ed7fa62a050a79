#!/usr/bin/env bash
# End to end: a conversion killed after its first shard (the hidden --stop-after-shards testing
# aid: SIGKILL, no cleanup) leaves only DST.partial; --resume re-verifies the kept shard, finishes,
# and the result is byte-identical to an uninterrupted run.
# Usage: convert_resume.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
work=$2
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
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
echo "convert_resume: ok"
