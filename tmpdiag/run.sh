#!/usr/bin/env bash
B=.gpu-bundle; . tools/gpu-check/host-env.sh
timeout 300 $B/node $B/gpuhash-bench.mjs hkv full --workload throughput --dims 1,32,64 --loads 0.5,1.0 --capacity-log2 27 --reps 3 --json $OUT/bench.json 2>&1 | tee $OUT/bench.txt | tail -40
