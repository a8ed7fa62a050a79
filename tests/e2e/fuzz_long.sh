#!/usr/bin/env bash
# ctest: slow
# Fuzzes every libFuzzer target of tests/fuzz/ for FUZZ_SECONDS each (default 1800: half an hour)
# from a copy of its seed corpus, in a clang build of its own with -DMINIMAX_FUZZ=ON, and fails
# when any target leaves a crash, leak, timeout or out-of-memory input. Prints each target's
# executions and coverage (libFuzzer's last "#N DONE cov: .. ft: .." line). The replay drivers of
# the unit suite only rerun the seeds; this is where new inputs are searched for.
#
#   FUZZ_SECONDS=1800   time per target (wall clock; with FUZZ_PARALLEL <= cores, about CPU time)
#   FUZZ_PARALLEL=N     targets fuzzed at once (default: the number of cores)
#   FUZZ_TARGETS="a b"  a subset (names as in tests/CMakeLists.txt's minimax_fuzz_target)
#   FUZZ_BUILD_DIR=dir  an existing -DMINIMAX_FUZZ=ON build to reuse instead of building one
# Skipped (77) without clang. A found input is kept under $WORK/<target>/artifacts/: minimize it
# with `fuzz_<target> -minimize_crash=1 -runs=10000 <file>`, then add it to tests/data/.
set -euo pipefail
WORK=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_EACH=${FUZZ_SECONDS:-1800}
PARALLEL=${FUZZ_PARALLEL:-$(nproc)}
TARGETS=${FUZZ_TARGETS:-"safetensors_header openai_request http_request regex_grammar json_schema tool_call_grammar"}
BUILD=${FUZZ_BUILD_DIR:-$WORK/build-fuzz}
mkdir -p "$WORK"

if ! command -v clang++ >/dev/null; then
  echo "SKIP clang++ not found (scripts/setup.sh installs clang and libclang-rt-14-dev)"
  exit 77
fi

# The seed corpus of each target (its glob in tests/CMakeLists.txt).
declare -A CORPUS=(
  [safetensors_header]=safetensors_bad [openai_request]=openai_bad
  [http_request]=http_requests [regex_grammar]=regex_patterns
  [json_schema]=json_schemas [tool_call_grammar]=tool_call_tools
)

if [[ -z ${FUZZ_BUILD_DIR:-} ]]; then
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$BUILD" -G Ninja -DMINIMAX_FUZZ=ON -DMINIMAX_BENCH=OFF \
    -DMINIMAX_CUDA=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/configure.log"
fi
ninja -C "$BUILD" -j "$PARALLEL" $(printf 'fuzz_%s ' $TARGETS) >"$WORK/build.log"

# Runs one target; its log is $WORK/<target>/fuzz.log.
fuzz_one() {
  local target=$1 dir=$WORK/$1
  rm -rf "$dir" && mkdir -p "$dir/corpus" "$dir/artifacts"
  cp "$ROOT/tests/data/${CORPUS[$target]}"/* "$dir/corpus/"
  # -timeout: one input running longer is a hang; -rss_limit_mb: growth past it is a leak of the
  # limits the grammar code promises. A nonzero exit is read from the artifacts below.
  (cd "$dir" && "$BUILD/tests/fuzz_$target" -max_total_time="$SECONDS_EACH" -timeout=30 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" corpus \
    >fuzz.log 2>&1) || true
}

running=0
for target in $TARGETS; do
  fuzz_one "$target" &
  if ((++running >= PARALLEL)); then
    wait -n
    ((running--))
  fi
done
wait

status=0
for target in $TARGETS; do
  dir=$WORK/$target
  done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$dir/fuzz.log" | tail -1 || true)
  found=$(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | sort)
  printf '%-20s %s s  corpus %s files  %s\n' "$target" "$SECONDS_EACH" \
    "$(find "$dir/corpus" -type f | wc -l)" "${done_line:-(no DONE line)}"
  if [[ -n $found || -z $done_line ]]; then
    echo "FAIL $target: ${found:-libFuzzer stopped early}"
    grep -E 'ERROR|SUMMARY|==[0-9]+==' "$dir/fuzz.log" | head -5 || true
    status=1
  fi
done
exit $status
