#!/usr/bin/env bash
# Decode speed of each parallel mode with the two ranks on two "hosts" joined by a slow link
# (scripts/lib/netns.sh: network namespaces; the link delays every frame by DELAY_MS one way through
# tools/netns/delay_link.py, "veth" is a plain veth pair), and the bytes each rank sends per decode
# and per prefill token (Communicator::sent_bytes). Needs root. Prints one row per link and mode.
# Usage:
#   bench/netns_decode.sh MINIMAX MODEL_DIR [GEN_TOKENS=16] [LINKS="veth 0 0.1 1"]
set -euo pipefail
MINIMAX=$(realpath "$1")
MODEL=$(realpath "$2")
GEN=${3:-16}
LINKS=${4:-veth 0 0.1 1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
source "$ROOT/scripts/lib/check.sh"
source "$ROOT/scripts/lib/netns.sh"
trap 'remove_netns_hosts; rm -rf "$WORK"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for link in $LINKS; do
  if [[ $link == veth ]]; then make_netns_hosts "$WORK"; else make_netns_hosts "$WORK" "$link"; fi
  for mode in TP_TP TP_EP DP_EP; do
    case $mode in
      TP_TP) flags=(--tensor-parallel-size 2) ;;
      TP_EP) flags=(--tensor-parallel-size 2 --enable-expert-parallel) ;;
      DP_EP) flags=(--data-parallel-size 2 --enable-expert-parallel) ;;
    esac
    netns_mpirun "$MINIMAX" bench --model "$MODEL" --gen-tokens "$GEN" --repeat 2 --threads 1 \
      --json "${flags[@]}" 2>/dev/null >"$WORK/$link-$mode.json"
  done
  remove_netns_hosts
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK" "$LINKS" <<'PYEOF'
import json, sys, os
work, links = sys.argv[1], sys.argv[2].split()
print(f"{'link (one-way delay)':>21} {'mode':>6} {'decode tok/s':>13} {'comm ms/token':>14} "
      f"{'decode B/token by rank':>24} {'prefill B/token by rank':>24}")
for link in links:
    for mode in ("TP_TP", "TP_EP", "DP_EP"):
        r = json.load(open(os.path.join(work, f"{link}-{mode}.json")))
        p = r["parallel"]
        name = "veth" if link == "veth" else f"tap+{link} ms"
        dec = " ".join(f"{b:.0f}" for b in p["decode_sent_bytes_per_token_by_rank"])
        pre = " ".join(f"{b:.0f}" for b in p["prefill_sent_bytes_per_token_by_rank"])
        print(f"{name:>21} {mode:>6} {r['decode_tok_s']:13.2f} "
              f"{p['decode_comm_seconds_per_token'] * 1e3:14.2f} {dec:>24} {pre:>24}")
PYEOF
