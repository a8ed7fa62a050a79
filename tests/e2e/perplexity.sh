#!/usr/bin/env bash
# `minimax perplexity` on the bundled trained model and its evaluation text
# (tests/data/perplexity/minimax-m3-tiny.txt, docs/perplexity.md): a base written with f32
# activations and f32 KV, the same run compared with it (KL exactly 0, top-1 exactly 1, the same
# perplexity), every --activations value compared with it (KL finite and >= 0; bf16 small but not
# 0), the defaults within the quality budget, the JSON keys and the text report, and bad input
# refused naming the flag or file: a text other than the base's, a missing, empty or too short
# text, another --context, a corrupted base, an existing base without --force, --kl-divergence
# without a base.
# $1 = minimax binary, $2 = scratch dir.
set -euo pipefail
bin=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/scripts/lib/check.sh"  # fail, check
model=$root/models/minimax-m3-tiny
text=$root/tests/data/perplexity/minimax-m3-tiny.txt
rm -rf "$work" && mkdir -p "$work"
[[ -f $model/config.json && -f $text ]] || fail "the bundled model or its evaluation text is missing"

ppl() { "$bin" perplexity --model "$model" --threads 2 --quiet "$@"; }
base=$work/base.kl

# The base: f32 activations, f32 KV. It appears under its name only when complete.
ppl --file "$text" --activations f32 --kv-cache-dtype f32 --kl-divergence-base "$base" --json \
  >"$work/base.json"
[[ -s $base && ! -e $base.tmp ]] || fail "no base file (or a leftover $base.tmp)"

# The same run against it, then every activation precision.
ppl --file "$text" --activations f32 --kv-cache-dtype f32 --kl-divergence-base "$base" \
  --kl-divergence --json >"$work/self.json"
for activations in auto f32 bf16x2 bf16x2-batches bf16 bf16-batches; do
  ppl --file "$text" --activations "$activations" --kv-cache-dtype f32 --kl-divergence-base "$base" \
    --kl-divergence --json >"$work/$activations.json"
done
# The defaults (no precision flag at all): held to the quality budget of docs/perplexity.md.
ppl --file "$text" --kl-divergence-base "$base" --kl-divergence --json >"$work/defaults.json"

python3 - "$work" <<'PY'
import json, math, sys
work = sys.argv[1]
load = lambda name: json.load(open(f"{work}/{name}.json"))
base, same = load("base"), load("self")
for key in ("perplexity", "perplexity_stderr", "tokens_scored", "windows", "context"):
    assert key in base, f"base run: no '{key}'"
for key in ("kld_mean", "kld_p99", "top1_agreement", "max_abs_dlogprob"):
    assert key not in base, f"base run (nothing to compare): '{key}' present"
assert base["windows"] >= 4 and base["context"] == 512, base
assert base["tokens_scored"] == base["windows"] * 255, base
assert base["perplexity"] > 1 and base["perplexity_stderr"] > 0, base

for key in ("perplexity", "kld_mean", "kld_p99", "top1_agreement", "max_abs_dlogprob",
            "kld_max", "base_perplexity", "top1_agreement_stderr", "kld_mean_stderr"):
    assert key in same, f"compared run: no '{key}'"
assert same["kld_mean"] == 0 and same["kld_p99"] == 0 and same["kld_max"] == 0, same
assert same["top1_agreement"] == 1 and same["max_abs_dlogprob"] == 0, same
assert same["perplexity"] == base["perplexity"] == same["base_perplexity"], (base, same)

for name in ("auto", "f32", "bf16x2", "bf16x2-batches", "bf16", "bf16-batches"):
    run = load(name)
    for key in ("kld_mean", "kld_p99", "kld_max", "max_abs_dlogprob"):
        assert math.isfinite(run[key]) and run[key] >= 0, (name, key, run[key])
    assert 0 <= run["top1_agreement"] <= 1, (name, run)
bf16 = load("bf16")
assert bf16["activations"] == "bf16", bf16
# Rounded activations move the predictions a little: not at all would mean the flag did nothing.
assert 0 < bf16["kld_mean"] < 0.05 and bf16["top1_agreement"] > 0.95, bf16
# The budget the default precision is chosen by (docs/perplexity.md "The default precision").
defaults = load("defaults")
assert defaults["kld_mean"] <= 5e-4 and defaults["kld_p99"] <= 5e-3, defaults
assert defaults["top1_agreement"] >= 0.99, defaults
print(f"ok   the defaults ({defaults['activations']}, KV {defaults['kv_cache_dtype']}) are within "
      f"the budget: mean KLD {defaults['kld_mean']:.3g}, p99 {defaults['kld_p99']:.3g}, "
      f"top-1 {defaults['top1_agreement']:.4f}")
print(f"ok   base PPL {base['perplexity']:.1f}; bf16 activations: mean KLD {bf16['kld_mean']:.3g}, "
      f"p99 {bf16['kld_p99']:.3g}, top-1 {bf16['top1_agreement']:.4f}")
PY

# The text report names every number.
ppl --file "$text" --activations bf16 --kv-cache-dtype f32 --kl-divergence-base "$base" \
  --kl-divergence >"$work/report.txt"
for label in "PPL" "base PPL" "mean KLD" "99th pct KLD" "top-1 agreement" "max |dlogprob|"; do
  grep -q "^$label " "$work/report.txt" || fail "text report without '$label': $(cat "$work/report.txt")"
done

# Bad input: each refused before the weights are read, naming the flag or file.
expect_error() {  # $1 = expected part of the message, the rest = perplexity's arguments
  local want=$1
  shift
  if ppl "$@" >"$work/out" 2>"$work/err"; then fail "accepted: $*"; fi
  grep -qF -- "$want" "$work/err" || fail "error for '$*' lacks '$want': $(cat "$work/err")"
}
sed '0,/helpful/s//careful/' "$text" >"$work/other.txt"
[[ $(wc -c <"$work/other.txt") -gt 0 ]] && ! cmp -s "$text" "$work/other.txt" || fail "no other text"
expect_error "$base: written for another text" \
  --file "$work/other.txt" --kl-divergence-base "$base" --kl-divergence
expect_error "written with windows of 512 tokens" \
  --file "$text" --context 256 --kl-divergence-base "$base" --kl-divergence
expect_error "--file $work/missing.txt: no such file" --file "$work/missing.txt"
: >"$work/empty.txt"
expect_error "--file $work/empty.txt: the text is empty" --file "$work/empty.txt"
head -c 300 "$text" >"$work/short.txt"
expect_error "--context 512 needs at least 512" --file "$work/short.txt"
grep -q "the text is [0-9]* tokens" "$work/err" || fail "no token count: $(cat "$work/err")"
expect_error "--kl-divergence-base $base: exists" --file "$text" --kl-divergence-base "$base"
expect_error "--kl-divergence: give the base" --file "$text" --kl-divergence
cp "$base" "$work/corrupt.kl"
printf '\x55' | dd of="$work/corrupt.kl" bs=1 seek=100 conv=notrunc status=none
expect_error "$work/corrupt.kl: corrupted" \
  --file "$text" --kl-divergence-base "$work/corrupt.kl" --kl-divergence
head -c 1000 "$base" >"$work/truncated.kl"
expect_error "$work/truncated.kl: truncated" \
  --file "$text" --kl-divergence-base "$work/truncated.kl" --kl-divergence

# --force replaces a base.
ppl --file "$text" --activations f32 --kv-cache-dtype f32 --kl-divergence-base "$base" --force \
  --json >/dev/null
echo "ok   perplexity"
