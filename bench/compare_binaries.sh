#!/usr/bin/env bash
# Old against new `minimax` on one model, in the same run: the two binaries alternate ROUNDS
# times at each thread count (so a change in the machine's load hits both alike), each run itself
# best of --repeat 3; prints each binary's best prefill and decode tok/s and new/old ratios, and
# where the binary reports them (bench's compute peak), prefill GFLOP/s against that peak in wall
# and in CPU time with the prefill's CPU share (on a busy machine the CPU-time ratio is the one
# that means something), then the median and range of the round-by-round new/old ratios.
# Usage:
#   [BENCH_ARGS="--prompt-tokens 512"] [OLD_ENV="K=V ..."] [NEW_ENV="K=V ..."] \
#   bench/compare_binaries.sh OLD_MINIMAX NEW_MINIMAX MODEL_DIR [ROUNDS=3] [THREADS="1 2"]
# BENCH_ARGS are added to every `bench` call; OLD_ENV / NEW_ENV are environment assignments for
# one binary's runs (e.g. NEW_ENV=MINIMAX_CPU_ACTIVATIONS=bf16-batches).
set -euo pipefail
OLD=$1
NEW=$2
MODEL=$3
ROUNDS=${4:-3}
THREADS=${5:-"1 2"}
# Any python3 will do: the report needs only the standard library.
PY=$(command -v /usr/bin/python3 || command -v python3)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $THREADS; do
  for r in $(seq "$ROUNDS"); do
    for which in old new; do
      bin=$OLD
      envs=${OLD_ENV:-}
      [[ $which == new ]] && bin=$NEW && envs=${NEW_ENV:-}
      # shellcheck disable=SC2086  # BENCH_ARGS and the environment are word lists
      env $envs "$bin" bench --model "$MODEL" --threads "$t" --json --quiet ${BENCH_ARGS:-} \
        2>/dev/null >"$WORK/$which-$t-$r.json"
    done
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$WORK" "$ROUNDS" $THREADS <<'PYEOF'
import json, os, statistics, sys
work, rounds, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print(f"{'threads':>7} {'binary':>6} {'prefill tok/s':>14} {'decode tok/s':>13} "
      f"{'decode GB/s':>12} {'read GB/s':>10} {'decode/read':>12} {'prefill/peak':>13} "
      f"{'(CPU time)':>10} {'CPU share':>9}")
for t in threads:
    best = {}
    for which in ("old", "new"):
        runs = [json.load(open(os.path.join(work, f"{which}-{t}-{r}.json")))
                for r in range(1, rounds + 1)]
        fast = max(runs, key=lambda x: x["prefill_tok_s"])
        prefill = fast["prefill_tok_s"]
        top = max(runs, key=lambda x: x["decode_tok_s"])
        best[which] = (prefill, top["decode_tok_s"])
        gbs = top["achieved_gbps"]
        read = top["read_gbps"]
        # Binaries without a compute peak print dashes; the CPU-time ratio is the best run's.
        wall = f"{fast['prefill_ratio_to_peak']:.3f}" if "prefill_ratio_to_peak" in fast else "-"
        cpu = max((x.get("prefill_ratio_to_peak_cpu_time", 0) for x in runs), default=0)
        share = f"{fast['prefill_cpu_share']:.2f}" if "prefill_cpu_share" in fast else "-"
        print(f"{t:>7} {which:>6} {prefill:>14.2f} {top['decode_tok_s']:>13.2f} {gbs:>12.2f} "
              f"{read:>10.2f} {top['ratio_to_read']:>12.3f} {wall:>13} "
              f"{(f'{cpu:.3f}' if cpu else '-'):>10} {share:>9}")
    print(f"{t:>7} {'new/old':>6} {best['new'][0] / best['old'][0]:>14.3f} "
          f"{best['new'][1] / best['old'][1]:>13.3f}")
    # Round by round (each new run right after its old one): on a host whose speed changes in
    # phases the median of these ratios is steadier than the ratio of the bests.
    pairs = [[json.load(open(os.path.join(work, f"{w}-{t}-{r}.json"))) for w in ("old", "new")]
             for r in range(1, rounds + 1)]
    for key, name in (("prefill_tok_s", "prefill"), ("decode_tok_s", "decode")):
        ratios = sorted(n[key] / o[key] for o, n in pairs if o[key] > 0)
        if ratios:
            print(f"{t:>7} {name} new/old by round: median {statistics.median(ratios):.3f}, "
                  f"range {ratios[0]:.3f}-{ratios[-1]:.3f}")
PYEOF
