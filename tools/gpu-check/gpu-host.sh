#!/usr/bin/env bash
# The whole GPU-host session in one command (device time is scarce): the check suites at scale,
# the insert-variant comparison, and the full benchmark. Expects .gpu-bundle/ made by
# tools/gpu-check/pack-all.sh and writes everything under $OUT (at most 8 files).
#   bash tools/gpu-check/gpu-host.sh [kernels-scale=64] [tables-scale=256] [bench-args...]
set -uo pipefail
B=.gpu-bundle
OUT=${OUT:-/tmp/gpuhash-out}
mkdir -p "$OUT"
ks=${1:-64}
ts=${2:-256}
shift 2 2>/dev/null || shift $#
rev=$(cat "$B/REVISION" 2>/dev/null || echo unknown)
{
  echo "== kernels checks, scale $ks"
  bash "$B/run.sh" --scale "$ks" --filter kernels/ --require-hardware --json "$OUT/check-kernels.json"
  echo "== table checks, scale $ts"
  bash "$B/run.sh" --scale "$ts" --filter 'linear-probe/' --require-hardware --json "$OUT/check-tables.json"
} > "$OUT/check.log" 2>&1
# run.sh has unpacked node and Dawn; point the loader at the NVIDIA driver for the other entries.
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$icd" ]; then export VK_DRIVER_FILES=$icd; fi
done
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-/tmp}
"$B/node" "$B/perf-insert.mjs" 27 > "$OUT/perf-insert.log" 2>&1
"$B/node" "$B/gpuhash-bench.mjs" full --require-hardware --git-revision "$rev" \
  --json "$OUT/bench-full.json" --markdown "$OUT/bench-full.md" --svg "$OUT/svg" "$@" > "$OUT/bench.log" 2>&1
tar czf "$OUT/svg.tgz" -C "$OUT" svg && rm -rf "$OUT/svg"
grep -h -E "passed|failed|^device" "$OUT/check.log"; tail -3 "$OUT/perf-insert.log" "$OUT/bench.log"
