import type { Gpu, GpuTimer } from '@gpuhash/core';
import type { TimestampWrites } from '../tables/types';

/** Hands out timestamp writes for a timed pass, labelled; returns undefined in warm-up reps. */
export type TimeSlot = (label: string) => TimestampWrites;

/** Records one repetition into the encoder: untimed setup passes, then passes timed via `time`. */
export type EncodeRep = (encoder: GPUCommandEncoder, time: TimeSlot, rep: number) => void;

export interface RepOptions {
  /** Untimed repetitions first, at least. */
  warmup: number;
  reps: number;
  /**
   * Warm up for at least this long (0: no minimum): a GPU left idle by host work (end-to-end
   * runs, readbacks) drops its clock, and one short warm-up rep does not bring it back.
   */
  warmupMs?: number;
  /** Label of the submission, for GPU error messages. */
  label: string;
}

/** Most warm-up reps a minimum warm-up time may add. */
const MAX_WARMUP_REPS = 500;

/** Wall-clock ms of one untimed rep in its own submission: sizes the warm-up. */
async function probe(gpu: Gpu, encodeRep: EncodeRep, label: string): Promise<number> {
  const encoder = gpu.device.createCommandEncoder({ label: `${label} (probe)` });
  encodeRep(encoder, () => undefined, 0);
  const t0 = performance.now();
  gpu.submit([encoder.finish()]);
  await gpu.finish();
  return performance.now() - t0;
}

// WebGPU caps a query set at 4096 queries: two per pass.
const PASSES_PER_TIMER = 2048;

/**
 * Runs the warm-up and then `reps` repetitions back to back in ONE command buffer and returns, per label,
 * the GPU milliseconds of each timed repetition (passes sharing a label within a rep are summed).
 * One submission keeps the GPU busy from the first pass to the last: host gaps between passes
 * let its clock drop and make passes look up to 5x slower (DESIGN.md fact 8).
 */
export async function timeReps(gpu: Gpu, encodeRep: EncodeRep, options: RepOptions): Promise<Map<string, number[]>> {
  if (!gpu.hasTimestamps) throw new Error('this device has no timestamp-query feature; gpuhash-bench needs GPU timestamps');
  return gpu.run(options.label, async () => {
    let warmup = options.warmup;
    if ((options.warmupMs ?? 0) > 0) {
      const ms = await probe(gpu, encodeRep, options.label);
      warmup = Math.max(warmup, Math.min(MAX_WARMUP_REPS, Math.ceil((options.warmupMs ?? 0) / Math.max(ms, 0.01))));
    }
    const timers: GpuTimer[] = [];
    const owners: Array<{ rep: number; label: string }> = [];
    const slot = (rep: number, label: string): TimestampWrites => {
      let timer = timers[timers.length - 1];
      if (!timer || owners.length >= timers.length * PASSES_PER_TIMER) {
        timer = gpu.createTimer(PASSES_PER_TIMER);
        timers.push(timer);
      }
      owners.push({ rep, label });
      return timer.slot(label);
    };
    const encoder = gpu.device.createCommandEncoder({ label: options.label });
    for (let r = 0; r < warmup + options.reps; r++) {
      const timed = r - warmup;
      encodeRep(encoder, timed >= 0 ? (label) => slot(timed, label) : () => undefined, r);
    }
    for (const t of timers) t.resolve(encoder);
    gpu.submit([encoder.finish()]);
    const result = new Map<string, number[]>();
    try {
      let i = 0;
      for (const t of timers) {
        for (const pass of (await t.read()).passes) {
          const owner = owners[i++] as { rep: number; label: string };
          let perRep = result.get(owner.label);
          if (!perRep) result.set(owner.label, (perRep = new Array<number>(options.reps).fill(0)));
          perRep[owner.rep] = (perRep[owner.rep] ?? 0) + pass.ms;
        }
      }
    } finally {
      for (const t of timers) t.destroy();
    }
    return result;
  });
}

/** The per-rep samples of a label; throws when the label was never timed (a workload bug). */
export function samplesOf(times: Map<string, number[]>, label: string): number[] {
  const samples = times.get(label);
  if (!samples) throw new Error(`no timed pass labelled '${label}'`);
  return samples;
}
