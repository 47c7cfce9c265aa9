import { BufferUsage, type Gpu, MapMode } from '@gpuhash/core';
import { type Stats, summarize } from './stats';

/** One direction of the host link: wall-clock time to move `bytes`, and the rate at the median. */
export interface HostLinkResult {
  bytes: number;
  ms: Stats;
  gbPerSecond: number;
}

/**
 * The second roofline, for end-to-end runs from host arrays: what the link between host memory
 * and the GPU moves through WebGPU, measured the way a table's host API moves data.
 */
export interface HostLink {
  /**
   * From a filled host array to the GPU's completion of it, the way tables upload host batches
   * (`Gpu.writeStaged`: mapped staging buffers in turn; one `writeBuffer` ran 5x slower on an H100).
   */
  upload: HostLinkResult;
  /** A copy into a mappable buffer, `mapAsync`, and the copy out into a host array already in use. */
  download: HostLinkResult;
}

/** The floor an end-to-end run cannot beat: its bytes each way at the measured rates. */
export function hostLinkFloorMs(link: HostLink, bytes: { up: number; down: number }): number {
  return bytes.up / (link.upload.gbPerSecond * 1e6) + bytes.down / (link.download.gbPerSecond * 1e6);
}

/** Bytes per direction: 256 MiB on a GPU (past any staging cache), 16 MiB on a software adapter. */
export function hostLinkBytes(gpu: Gpu): number {
  return Math.min(gpu.isSoftware ? 16 * 2 ** 20 : 256 * 2 ** 20, gpu.limits.maxBufferSize);
}

/** Measures both directions, `warmup` untimed and `reps` timed transfers each. */
export async function measureHostLink(gpu: Gpu, options: { reps: number; warmup: number }): Promise<HostLink> {
  const bytes = hostLinkBytes(gpu);
  // Host arrays written once before timing, so page faults are not part of the link.
  const source = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4096) source[i] = i >>> 12;
  const target = new Uint8Array(bytes);
  target.fill(1);
  const device = gpu.createBuffer(bytes, 'bench.host-link.device', BufferUsage.STORAGE | BufferUsage.COPY_DST | BufferUsage.COPY_SRC);
  const staging = gpu.createBuffer(bytes, 'bench.host-link.staging', BufferUsage.MAP_READ | BufferUsage.COPY_DST);
  try {
    const time = async (move: () => Promise<void>) => {
      const samples: number[] = [];
      for (let r = 0; r < options.warmup + options.reps; r++) {
        await gpu.finish();
        const t0 = performance.now();
        await move();
        if (r >= options.warmup) samples.push(performance.now() - t0);
      }
      const ms = summarize(samples);
      return { bytes, ms, gbPerSecond: bytes / (ms.median * 1e6) };
    };
    const upload = await time(async () => {
      await gpu.writeStaged(device, source);
      await gpu.finish();
    });
    const download = await time(async () => {
      const encoder = gpu.device.createCommandEncoder({ label: 'bench.host-link.download' });
      encoder.copyBufferToBuffer(device, 0, staging, 0, bytes);
      gpu.submit([encoder.finish()]);
      await staging.mapAsync(MapMode.READ, 0, bytes);
      target.set(new Uint8Array(staging.getMappedRange(0, bytes)));
      staging.unmap();
    });
    return { upload, download };
  } finally {
    device.destroy();
    staging.destroy();
  }
}
