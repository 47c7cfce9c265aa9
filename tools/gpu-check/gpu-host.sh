#!/usr/bin/env bash
# The whole GPU-host session in one command (device time is scarce): check suites at scale,
# optionally the insert-variant comparison (PERF=1), Hive's per-pass profile (HIVE_PERF=1) and the sharded
# table over every GPU (SHARDED=1: two more files, perf-sharded.log and .json, so pair it with BENCH=0
# or fewer CHECKS), and the full benchmark. Expects .gpu-bundle/
# made by tools/gpu-check/pack-all.sh and writes everything under $OUT (at most 8 files; svg.tgz
# holds the bench's charts and, where nvidia-smi exists, clocks.csv: the GPU's clocks during it).
#   BENCH=0 skips the benchmark; CHECKS=none skips the checks (an empty CHECKS means the default set).
#   CHECKS="kernels/:64 linear-probe/:256 hive/:64" bash tools/gpu-check/gpu-host.sh [bench-args...]
set -uo pipefail
B=.gpu-bundle
OUT=${OUT:-/tmp/gpuhash-out}
mkdir -p "$OUT"
CHECKS=${CHECKS:-"kernels/:64 linear-probe/:256 hive/:64"}
[ "$CHECKS" = none ] && CHECKS=""
rev=$(cat "$B/REVISION" 2>/dev/null || echo unknown)
for c in $CHECKS; do
  f=${c%%:*}
  s=${c##*:}
  echo "== checks matching '$f', scale $s"
  bash "$B/run.sh" --scale "$s" --filter "$f" --require-hardware --json "$OUT/check-${f%%/*}.json"
done > "$OUT/check.log" 2>&1
. "$(dirname "$0")/host-env.sh"
[ "${PERF:-0}" = 1 ] && "$B/node" "$B/perf-insert.mjs" 27 > "$OUT/perf-insert.log" 2>&1
# Hive's per-pass profile (perf-hive.ts): HIVE_PERF=1.
[ "${HIVE_PERF:-0}" = 1 ] && "$B/node" "$B/perf-hive.mjs" 27 > "$OUT/perf-hive.log" 2>&1
# The sharded table over every GPU (perf-sharded.ts; needs Mesa's device-select layer): SHARDED=1.
if [ "${SHARDED:-0}" = 1 ]; then
  . "$(dirname "$0")/device-select.sh" > "$OUT/perf-sharded.log" 2>&1
  "$B/node" "$B/perf-sharded.mjs" --json "$OUT/perf-sharded.json" >> "$OUT/perf-sharded.log" 2>&1
fi
if [ "${BENCH:-1}" = 1 ]; then
  # The GPU's clocks during the run (nvidia-smi, every 200 ms), beside the bench log's timed lines:
  # a row measured while the clock was still coming back from idle shows there.
  clocks=""
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
      --format=csv -lms 200 > "$OUT/clocks.csv" 2>&1 &
    clocks=$!
  fi
  "$B/node" "$B/gpuhash-bench.mjs" full --require-hardware --git-revision "$rev" \
    --json "$OUT/bench-full.json" --markdown "$OUT/bench-full.md" --svg "$OUT/svg" "$@" 2>&1 |
    while IFS= read -r line; do echo "$(date +%H:%M:%S.%N | cut -c1-12) $line"; done > "$OUT/bench.log"
  [ -n "$clocks" ] && kill "$clocks"
  # One archive for the charts and the clock trace (the device call returns at most 8 files).
  tar czf "$OUT/svg.tgz" -C "$OUT" svg $([ -f "$OUT/clocks.csv" ] && echo clocks.csv) && rm -rf "$OUT/svg" "$OUT/clocks.csv"
fi
grep -h -E "^==|passed|failed|^FAIL" "$OUT/check.log"
if [ -f "$OUT/bench.log" ]; then tail -n 3 "$OUT/bench.log"; fi
