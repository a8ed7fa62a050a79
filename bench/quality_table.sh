#!/usr/bin/env bash
# Every weight layout of the bundled trained model × activation precision × KV cache type, scored
# with `minimax perplexity` on its evaluation text (issue 34 item 2; docs/perplexity.md "Every
# layout"). The layouts: the bundled model as stored (BF16), `minimax quantize` to each published
# format, and `minimax convert` of the MXFP4 one (the converted FP8). Each layout gets its own base
# (f32 activations, f32 KV, the same weights); every precision pair is compared with that base, and
# the base itself with the BF16 base (what quantizing the weights costs). Prints two markdown
# tables (what each layout stores; the scores) and writes them to OUTDIR/table.md; the checkpoints, bases and JSON reports stay under OUTDIR.
# Usage: bench/quality_table.sh [MINIMAX=build/minimax] [OUTDIR=build/quality_table]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$root/build/minimax}
OUT=${2:-$root/build/quality_table}
MODEL=$root/models/minimax-m3-tiny
TEXT=$root/tests/data/perplexity/minimax-m3-tiny.txt
THREADS=2
QUANTIZED="fp8-block fp8-channel mxfp8 mxfp4 mxfp4-fp8attn nvfp4"
LAYOUTS="bf16 $QUANTIZED converted-fp8"
ACTIVATIONS="f32 bf16x2 bf16"
KV_TYPES="f32 bf16 fp8_e4m3"
PY=$(command -v /usr/bin/python3 || command -v python3)
SECONDS=0

# Only the folders this script owns are replaced.
ckpt=$OUT/checkpoints
runs=$OUT/runs
rm -rf "$ckpt" "$runs"
mkdir -p "$ckpt" "$runs"

# The checkpoints. BF16 is the bundled model itself (config torch_dtype bfloat16; its
# model.safetensors is BF16 with the router in F32).
ln -s "$MODEL" "$ckpt/bf16"
for format in $QUANTIZED; do
  "$BIN" quantize --input "$MODEL" --output "$ckpt/$format" --format "$format" --quiet \
    >"$ckpt/$format.log" 2>&1 || { cat "$ckpt/$format.log" >&2; exit 1; }
done
"$BIN" convert --input "$ckpt/mxfp4" --output "$ckpt/converted-fp8" --threads "$THREADS" --quiet \
  >"$ckpt/converted-fp8.log" 2>&1 || { cat "$ckpt/converted-fp8.log" >&2; exit 1; }
# What each layout stores its Linears as, by group, as the loader reads it.
for layout in $LAYOUTS; do
  "$BIN" inspect "$ckpt/$layout" 2>/dev/null |
    awk '/^layouts:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1, $2 }' \
      >"$runs/$layout.layouts"
done

# One report per run; stderr (the load's log lines) beside it.
run_count=0
ppl() {  # $1 = report name, the rest = perplexity's arguments
  local name=$1
  shift
  "$BIN" perplexity --file "$TEXT" --threads "$THREADS" --quiet --json "$@" \
    >"$runs/$name.json" 2>"$runs/$name.log" || { cat "$runs/$name.log" >&2; exit 1; }
  run_count=$((run_count + 1))
}
for layout in $LAYOUTS; do
  base=$runs/$layout.base.kl
  ppl "$layout.base" --model "$ckpt/$layout" --activations f32 --kv-cache-dtype f32 \
    --kl-divergence-base "$base"
  # The same f32 run against the BF16 weights' base (the BF16 layout against itself: 0).
  ppl "$layout.vs-bf16" --model "$ckpt/$layout" --activations f32 --kv-cache-dtype f32 \
    --kl-divergence --kl-divergence-base "$runs/bf16.base.kl"
  for activations in $ACTIVATIONS; do
    for kv in $KV_TYPES; do
      ppl "$layout.$activations.$kv" --model "$ckpt/$layout" --activations "$activations" \
        --kv-cache-dtype "$kv" --kl-divergence --kl-divergence-base "$base"
    done
  done
done

"$PY" - "$ckpt" "$runs" "$LAYOUTS" "$ACTIVATIONS" "$KV_TYPES" >"$OUT/table.md" <<'PYEOF'
import glob, json, os, sys
ckpt, runs, layouts, activations, kv_types = sys.argv[1], sys.argv[2], *map(str.split, sys.argv[3:])
load = lambda name: json.load(open(os.path.join(runs, name + ".json")))
size = lambda layout: sum(os.path.getsize(f)
                          for f in glob.glob(os.path.join(ckpt, layout, "*.safetensors")))
kld = lambda v: "0" if v == 0 else f"{v:.2e}"
top1 = lambda v: f"{100 * v:.2f}%"
bf16_size = size("bf16")
groups = ["attention", "index_branch", "dense_ffn", "routed_expert", "shared_expert", "lm_head"]
print("| layout | " + " | ".join(groups) + " |")
print("|---" * (len(groups) + 1) + "|")
for layout in layouts:
    stored = dict(line.split() for line in open(os.path.join(runs, layout + ".layouts")))
    print(f"| {layout} | " + " | ".join(stored.get(g, "-") for g in groups) + " |")
print()
print("| layout | weights (MB) | activations | KV | PPL | mean KLD | p99 KLD | top-1 "
      "| vs bf16 weights: mean KLD | p99 KLD | top-1 |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for layout in layouts:
    mb = f"{size(layout) / 1e6:.2f} ({size(layout) / bf16_size:.2f}x)"
    weights = load(f"{layout}.vs-bf16")
    for a in activations:
        for kv in kv_types:
            r = load(f"{layout}.{a}.{kv}")
            assert r["activations"] == a and r["kv_cache_dtype"] == kv, r
            row = [layout, mb, a, kv, f"{r['perplexity']:.0f}", kld(r["kld_mean"]),
                   kld(r["kld_p99"]), top1(r["top1_agreement"])]
            if a == "f32" and kv == "f32":
                row += [kld(weights["kld_mean"]), kld(weights["kld_p99"]),
                        top1(weights["top1_agreement"])]
            else:
                row += ["", "", ""]
            print("| " + " | ".join(row) + " |")
PYEOF
cat "$OUT/table.md"
echo
echo "$(lscpu | grep 'Model name' | sed 's/  */ /g'); $THREADS threads; $(date -u +%Y-%m-%d);" \
  "${SECONDS} s for $run_count perplexity runs, $(wc -w <<<"$QUANTIZED") quantizations and" \
  "a conversion"
