#!/usr/bin/env bash
# Same-host A/B of gpuhash-bench bundles, alternated (base, new, base, new, ...), on the GPU host.
# Expects .gpu-bundle/ from tools/gpu-check/pack-all.sh (node and Dawn), plus one bundle per variant:
#   .gpu-bundle/gpuhash-bench-base.mjs, .gpu-bundle/gpuhash-bench-new.mjs
# (build one with `pnpm -s bench:bundle` at each revision; it writes apps/bench/dist/gpuhash-bench.mjs).
# Writes $OUT/ab-VARIANT-R.md and prints each run's rows (load, op, GPU ms, G ops/s, share).
#   BASE_REV=83ac44b NEW_REV=f29007b ROUNDS=2 bash tools/gpu-check/ab.sh --table hive --workload build --loads 0.5,0.95
# More than two: VARIANTS="base:f509514 loop:f9adb71 wg128:f259f31" (name:revision; gpuhash-bench-NAME.mjs each).
set -uo pipefail
B=.gpu-bundle
OUT=${OUT:-/tmp/gpuhash-out}
mkdir -p "$OUT"
. "$(dirname "$0")/host-env.sh"
for r in $(seq 1 "${ROUNDS:-2}"); do
  for pair in ${VARIANTS:-"base:${BASE_REV:-base} new:${NEW_REV:-new}"}; do
    v=${pair%%:*}
    rev=${pair#*:}
    # The GPU host's copy of the tree reports its own checkout, so the revision is given here.
    "$B/node" "$B/gpuhash-bench-$v.mjs" full --require-hardware --no-e2e --quiet --git-revision "$rev" \
      --markdown "$OUT/ab-$v-$r.md" "$@" > "$OUT/ab-$v-$r.log" 2>&1
    echo "== $v ($rev), round $r"
    grep -E "^\| (hive|linear-probe|slab|random 4)" "$OUT/ab-$v-$r.md" | awk -F'|' '{print $2, $3, $4, $6, $8, $9}'
  done
done
