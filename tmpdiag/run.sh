#!/usr/bin/env bash
# A/B of Horton's insert rounds: base (indirect grids from a round-args pass) against new (fixed grids).
B=.gpu-bundle; . tools/gpu-check/host-env.sh
for r in 1 2; do
  for v in base new; do
    echo "== $v round $r" | tee -a $OUT/rounds-ab.txt
    TRACE=1 timeout 120 $B/node $B/perf-horton-$v.mjs 27 0.5,0.9 horton 2>&1 | grep -E "trace" | cut -c1-420 | tee -a $OUT/rounds-ab.txt
    BUILDS=4 timeout 120 $B/node $B/perf-horton-$v.mjs 27 0.9 horton 2>&1 | grep -vE "^device" | cut -c1-420 | tee -a $OUT/rounds-ab.txt
  done
done
timeout 280 bash $B/run.sh --scale 4 --filter horton --require-hardware --json $OUT/horton-scale4.json 2>&1 | tail -4
