#!/usr/bin/env bash
B=.gpu-bundle; . tools/gpu-check/host-env.sh
run() { echo "== $*" | tee -a $OUT/sweep.txt; env "$@" SPAN=1 GATHER=31.8 REPS=3 timeout 150 $B/node $B/perf-hkv.mjs 27 0.5,1.0,0.5 32,64 2>&1 | grep -v "arrays ready" | tee -a $OUT/sweep.txt | grep -c load; }
run WINDOW_MB=2048
run WINDOW_MB=4096
run VALUE_BUFFER_MB=1024 WINDOW_MB=1024
run WINDOW_MB=4096
run WINDOW_MB=2048
