# Sourced first by an end-to-end script, with the minimax binary and a scratch folder:
#   source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"
# Sets MINIMAX, WORK (emptied) and ROOT (the checkout), turns on `set -euo pipefail`, loads the
# server helpers (scripts/lib/server.sh) and `check` / `fail` (scripts/lib/check.sh), and on exit
# kills the processes listed in BACKGROUND_PIDS and stops every server started (MPI jobs too,
# when scripts/lib/mpi_server.sh is loaded).
set -euo pipefail
MINIMAX=$1
WORK=$2
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rm -rf "$WORK" && mkdir -p "$WORK"
source "$ROOT/scripts/lib/server.sh"
source "$ROOT/scripts/lib/check.sh"
BACKGROUND_PIDS=()
end_e2e() {
  for pid in "${BACKGROUND_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if declare -F stop_mpi_servers >/dev/null; then stop_mpi_servers; fi
  stop_servers
}
trap end_e2e EXIT
