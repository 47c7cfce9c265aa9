import { alloc } from './alloc';
import { build } from './build';
import type { Workload } from './context';
import { eraseFind } from './erase-find';
import { findHit, findMiss } from './find';
import { incremental, incrementalRebuild } from './incremental';
import { mixedHive, mixedSlabU20, mixedSlabU40, mixedSlabU100 } from './mixed';

export type { KeyBuffers, Workload, WorkloadContext } from './context';

/** Every workload, in run order. HKV's cache workloads join when @gpuhash/hkv exists. */
export const WORKLOADS: readonly Workload[] = [
  build,
  findHit,
  findMiss,
  eraseFind,
  mixedHive,
  mixedSlabU100,
  mixedSlabU40,
  mixedSlabU20,
  incremental,
  incrementalRebuild,
  alloc,
];

/** Names `--workload` accepts: every workload and every group. */
export function workloadNames(workloads: readonly Workload[] = WORKLOADS): string[] {
  const groups = workloads.map((w) => w.group).filter((g): g is string => g !== undefined);
  return [...new Set([...workloads.map((w) => w.name), ...groups])];
}

/** The workloads a `--workload` list selects (all when the list is null), in run order. */
export function selectWorkloads(names: readonly string[] | null, workloads: readonly Workload[] = WORKLOADS): Workload[] {
  if (names === null) return workloads.filter((w) => !w.optIn);
  return workloads.filter((w) => names.includes(w.name) || (w.group !== undefined && names.includes(w.group)));
}
