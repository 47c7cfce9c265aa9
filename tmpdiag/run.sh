#!/usr/bin/env bash
B=.gpu-bundle; . tools/gpu-check/host-env.sh
timeout 200 $B/node $B/perf-passes.mjs 128 2>&1 | tee $OUT/perf-passes.txt
