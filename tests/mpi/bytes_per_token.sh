#!/usr/bin/env bash
# The bytes each rank sends per token (Communicator::sent_bytes, reported by `bench --json`) against
# the arithmetic of docs/parallel.md, "Across hosts: bytes per token": under TP_TP and TP_EP rank 1
# sends exactly L · 2 · 4H (+ 8 per layer for M2's QK-norm sums) plus its half of the logits per
# decode token, rank 0 that plus the step's plan; under DP_EP at most the dispatch and combine rows
# of every MoE layer (a token none of whose experts is on the other rank stays home).
# $1 = minimax, $2 = parallel_check (unused), $3 = scratch dir.
set -euo pipefail
MINIMAX=$1
WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check
MPIRUN=(mpirun --oversubscribe --allow-run-as-root --bind-to none
  --mca btl_vader_single_copy_mechanism none -n 2)
BENCH=(bench --json --prompt-tokens 16 --gen-tokens 4 --repeat 1 --bandwidth-mib 8 --threads 1)

for arch in m2 m3; do
  "$MINIMAX" make-tiny --arch "$arch" --shape parallel --format bf16 --output "$WORK/$arch" >/dev/null
  for mode in TP_TP TP_EP DP_EP; do
    case $mode in
      TP_TP) flags=(--tensor-parallel-size 2) ;;
      TP_EP) flags=(--tensor-parallel-size 2 --enable-expert-parallel) ;;
      DP_EP) flags=(--data-parallel-size 2 --enable-expert-parallel) ;;
    esac
    "${MPIRUN[@]}" "$MINIMAX" "${BENCH[@]}" --model "$WORK/$arch" "${flags[@]}" \
      >"$WORK/$arch-$mode.json" 2>"$WORK/$arch-$mode.log" || { cat "$WORK/$arch-$mode.log"; fail "bench $arch $mode"; }
    python3 - "$WORK/$arch/config.json" "$WORK/$arch-$mode.json" "$arch" "$mode" <<'PYEOF' ||
import json, sys
config, result, arch, mode = sys.argv[1:]
c = json.load(open(config))
c = c.get("text_config", c)
r = json.load(open(result))
H, L, V, k = c["hidden_size"], c["num_hidden_layers"], c["vocab_size"], c["num_experts_per_tok"]
p = r["parallel"]
decode = p["decode_sent_bytes_per_token_by_rank"]
prefill = p["prefill_sent_bytes_per_token_by_rank"]
P = 16  # --prompt-tokens
print(f"{arch} {mode}: decode bytes/token by rank {decode}, prefill {prefill}")
if mode in ("TP_TP", "TP_EP"):
    layer = 2 * 4 * H + (8 if arch == "m2" else 0)
    want = L * layer + 4 * V // 2
    assert decode[1] == want, f"rank 1 sends {decode[1]} per decode token, the arithmetic {want}"
    # Rank 0 adds the step's plan: a 48-byte header, 36 bytes for one sequence with one KV block.
    assert decode[0] >= want + 48 + 32, f"rank 0 sends {decode[0]}, less than {want} + the plan"
    want_prefill = L * layer + 4 * V / 2 / P
    assert abs(prefill[1] - want_prefill) < 1e-6, f"rank 1 prefill {prefill[1]} vs {want_prefill}"
else:
    # The MoE layers (M3's first layers are dense and replicated: no exchange there).
    moe_layers = sum(c["moe_layer_freq"]) if "moe_layer_freq" in c else L
    home = moe_layers * (4 * H + 8 * k + 16) + 8 + 84 + 4 * V  # + logits if it lives on rank 1
    other = moe_layers * (4 * H + 16) + 8 + 84
    for rank, sent in enumerate(decode):
        assert 0 < sent <= max(home, other), f"rank {rank} sends {sent}, more than {max(home, other)}"
    assert sum(decode) >= moe_layers * 16 * 2, "no MoE exchange counted"
PYEOF
      fail "$arch $mode: bytes per token differ from the arithmetic"
  done
done
echo "bytes per token match the arithmetic"
