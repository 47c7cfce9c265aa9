#!/usr/bin/env bash
# Same-host A/B of two gpuhash-bench bundles, alternated (base, new, base, new, ...), on the GPU host.
# Expects .gpu-bundle/ from tools/gpu-check/pack-all.sh (node and Dawn), plus the two bundles:
#   .gpu-bundle/gpuhash-bench-base.mjs, .gpu-bundle/gpuhash-bench-new.mjs
# (build one with `pnpm -s bench:bundle` at each revision; it writes apps/bench/dist/gpuhash-bench.mjs).
# Writes $OUT/ab-{base,new}-R.md and prints each run's rows (load, op, GPU ms, G ops/s, share).
#   BASE_REV=83ac44b NEW_REV=f29007b ROUNDS=2 bash tools/gpu-check/ab.sh --table hive --workload build --loads 0.5,0.95
set -uo pipefail
B=.gpu-bundle
OUT=${OUT:-/tmp/gpuhash-out}
mkdir -p "$OUT"
. "$(dirname "$0")/host-env.sh"
for r in $(seq 1 "${ROUNDS:-2}"); do
  for v in base new; do
    rev=$([ "$v" = base ] && echo "${BASE_REV:-base}" || echo "${NEW_REV:-new}")
    # The GPU host's copy of the tree reports its own checkout, so the revision is given here.
    "$B/node" "$B/gpuhash-bench-$v.mjs" full --require-hardware --no-e2e --quiet --git-revision "$rev" \
      --markdown "$OUT/ab-$v-$r.md" "$@" > "$OUT/ab-$v-$r.log" 2>&1
    echo "== $v ($rev), round $r"
    grep -E "^\| (hive|linear-probe|slab|random 4)" "$OUT/ab-$v-$r.md" | awk -F'|' '{print $2, $3, $4, $6, $8, $9}'
  done
done
