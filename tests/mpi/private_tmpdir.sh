#!/usr/bin/env bash
# Runs one MPI test script with TMPDIR set to a fresh directory of its own and removes it after.
# Open MPI keeps each job's session directory (PMIx shared-memory segments, about 60 MB) under
# TMPDIR, and a job whose ranks are killed (the rank-lost and dead-link tests) leaves it behind;
# in the system /tmp these piled up to gigabytes over repeated runs. The directory stays under /tmp
# because PMIx puts Unix sockets there, whose paths may not exceed 108 bytes.
# $1 = the script; the rest are its arguments.
set -uo pipefail
dir=$(mktemp -d /tmp/minimax-mpi.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT
trap 'exit 143' TERM INT  # so that a ctest timeout removes it too
TMPDIR=$dir bash "$@"
