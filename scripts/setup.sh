#!/usr/bin/env bash
# Installs every Debian package minimax.cpp needs to build and test. Idempotent: packages already
# present are skipped, so a second run does no network work.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config git
  nlohmann-json3-dev libcpp-httplib-dev libfmt-dev libcli11-dev libpcre2-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin procps
  # ip netns / veth for the multi-host tests (tests/mpi/netns_*.sh); not in minimal images.
  iproute2
  clang libclang-rt-14-dev
  python3-numpy
  # The browser of the chat page's test (tests/e2e/chat_page.sh), driven by playwright-core from
  # npm (tools/browser_test). About 120 MB to download, 410 MB installed.
  chromium
)

# tools/train_eagle3.py (retraining the bundled model's EAGLE-3 head) needs Debian's torch, about
# 1 GB installed; no test trains, so it comes only with `scripts/setup.sh --training`.
if [[ ${1:-} == --training ]]; then PACKAGES+=(python3-torch); fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
