#!/usr/bin/env bash
B=.gpu-bundle; . tools/gpu-check/host-env.sh
timeout 200 $B/node $B/gpuhash-bench.mjs hkv full --workload throughput --dims 1,32,64 --loads 0.5,1.0 --capacity-log2 27 --reps 3 --json $OUT/bench.json 2>&1 | tee $OUT/bench.txt | tail -20
for span in 0 1 0 1; do
  echo "== SPAN=$span" | tee -a $OUT/perf-hkv-span.txt
  SPAN=$span GATHER=31.8 REPS=3 timeout 100 $B/node $B/perf-hkv.mjs 27 1.0,0.5 1,32,64 2>&1 | grep -v "arrays ready" | tee -a $OUT/perf-hkv-span.txt | grep -c load
done
