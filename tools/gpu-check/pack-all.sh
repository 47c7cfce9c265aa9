#!/usr/bin/env bash
# Bundles gpu-check (the entry), the perf scripts (perf-sharded: the sharded table over every GPU),
# gpuhash-bench and Mesa's device-select layer into .gpu-bundle/
# with ../shared/gpu-host/pack.sh, for tools/gpu-check/gpu-host.sh on the GPU host.
set -euo pipefail
cd "$(dirname "$0")/../.."
(cd tools/gpu-check && node build.mjs && for e in perf-insert perf-hive perf-layout perf-span perf-slab perf-hkv perf-horton perf-sharded perf-e2e perf-passes perf-window-order perf-scans scale-table; do node bundle-entry.mjs src/$e.ts dist/$e.mjs; done)
pnpm -s bench:bundle >/dev/null
../shared/gpu-host/pack.sh tools/gpu-check/dist/gpu-check.mjs
for e in perf-insert perf-hive perf-layout perf-span perf-slab perf-hkv perf-horton perf-sharded perf-e2e perf-passes perf-window-order perf-scans scale-table; do cp tools/gpu-check/dist/$e.mjs .gpu-bundle/; done
cp apps/bench/dist/gpuhash-bench.mjs .gpu-bundle/
# Mesa's device-select layer (perf-sharded and the sharded bench open each GPU through it).
bash tools/gpu-check/device-select.sh pack .gpu-bundle
git rev-parse --short=12 HEAD > .gpu-bundle/REVISION
[ -z "$(git status --porcelain)" ] || echo "$(cat .gpu-bundle/REVISION)-dirty" > .gpu-bundle/REVISION
echo "packed revision $(cat .gpu-bundle/REVISION)"
