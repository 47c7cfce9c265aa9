import { InternalError } from './errors';
import type { Kernel } from './kernel';

/** Compiled pipelines of one device, keyed by kernel name and specialisation. */
export class PipelineCache {
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private readonly sources = new Map<string, string>();
  hits = 0;
  misses = 0;

  constructor(private readonly device: GPUDevice) {}

  static keyOf(kernel: Kernel): string {
    return kernel.cacheKey ? `${kernel.name}[${kernel.cacheKey}]` : kernel.name;
  }

  get(kernel: Kernel): GPUComputePipeline {
    const key = PipelineCache.keyOf(kernel);
    const cached = this.pipelines.get(key);
    if (cached) {
      this.hits++;
      // A cache key must determine the source; a mismatch means two kernels share a key by mistake.
      if (this.sources.get(key) !== kernel.source) {
        throw new InternalError(
          `pipeline cache: kernel '${key}' was registered with different WGSL (give each specialisation its own cacheKey)`,
        );
      }
      return cached;
    }
    this.misses++;
    const module = this.device.createShaderModule({ label: key, code: kernel.source });
    const pipeline = this.device.createComputePipeline({
      label: key,
      layout: 'auto',
      compute: { module, entryPoint: kernel.entryPoint ?? 'main' },
    });
    this.pipelines.set(key, pipeline);
    this.sources.set(key, kernel.source);
    return pipeline;
  }

  get size(): number {
    return this.pipelines.size;
  }

  clear(): void {
    this.pipelines.clear();
    this.sources.clear();
  }
}
