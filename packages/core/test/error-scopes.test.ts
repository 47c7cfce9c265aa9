import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Gpu, type GpuhashError, GpuOutOfMemoryError, GpuValidationError } from '../src';

/**
 * A device that reports the given errors from its scopes (validation popped first, then
 * out-of-memory, as Gpu.run pushes them), with nothing else behind it: Gpu.run's choice of error,
 * without a GPU.
 */
function scopedDevice(validation: string | undefined, oom: string | undefined): GPUDevice {
  const popped: Array<GPUError | null> = [
    validation === undefined ? null : ({ message: validation } as GPUError),
    oom === undefined ? null : ({ message: oom } as GPUError),
  ];
  return {
    features: new Set<string>(),
    limits: {} as GPUSupportedLimits,
    lost: new Promise(() => {}),
    pushErrorScope: () => {},
    popErrorScope: async () => popped.shift() ?? null,
    destroy: () => {},
  } as unknown as GPUDevice;
}

function gpuOf(device: GPUDevice): Gpu {
  return new Gpu({ device, adapterInfo: undefined, isSoftware: true, ownsDevice: false, subgroupMinSize: 0, subgroupMaxSize: 0 });
}

describe('the error an operation reports', () => {
  it('is out of memory when the device ran out, whatever validation said after it', async () => {
    // A buffer that could not be had fails validation wherever it is used: the cause is the memory.
    await fc.assert(
      fc.asyncProperty(fc.option(fc.string(), { nil: undefined }), fc.string(), async (validation, oom) => {
        const error = await gpuOf(scopedDevice(validation, oom))
          .run('Table.create', async () => 1)
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(GpuOutOfMemoryError);
        expect((error as GpuhashError).code).toBe('OUT_OF_MEMORY');
        expect((error as GpuhashError).name).toBe('GpuOutOfMemoryError');
        expect((error as Error).message).toContain('Table.create');
      }),
      { numRuns: 50 },
    );
  });

  it('is a validation error when only validation failed, and the result otherwise', async () => {
    const failed = await gpuOf(scopedDevice('bad binding', undefined))
      .run('Table.insert', async () => 1)
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(GpuValidationError);
    expect((failed as GpuhashError).name).toBe('GpuValidationError');
    await expect(gpuOf(scopedDevice(undefined, undefined)).run('Table.find', async () => 7)).resolves.toBe(7);
  });
});

describe('an allocation (Gpu.allocate)', () => {
  it('frees what it built exactly when the device reported an error, and rejects with that error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.string(), { nil: undefined }),
        fc.option(fc.string(), { nil: undefined }),
        fc.integer(),
        async (validation, oom, value) => {
          const released: number[] = [];
          const outcome = await gpuOf(scopedDevice(validation, oom))
            .allocate(
              'Table.create',
              () => value,
              (built) => released.push(built),
            )
            .then(
              (v) => ({ ok: true as const, v }),
              (e: unknown) => ({ ok: false as const, e }),
            );
          if (oom !== undefined) expect(outcome.ok ? undefined : outcome.e).toBeInstanceOf(GpuOutOfMemoryError);
          else if (validation !== undefined) expect(outcome.ok ? undefined : outcome.e).toBeInstanceOf(GpuValidationError);
          else expect(outcome).toEqual({ ok: true, v: value });
          expect(released).toEqual(oom !== undefined || validation !== undefined ? [value] : []);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('frees nothing when the build itself threw, and rejects with what it threw', async () => {
    const released: unknown[] = [];
    const thrown = new RangeError('too large');
    const error = await gpuOf(scopedDevice(undefined, undefined))
      .allocate(
        'Table.create',
        () => {
          throw thrown;
        },
        (built) => released.push(built),
      )
      .catch((e: unknown) => e);
    expect(error).toBe(thrown);
    expect(released).toEqual([]);
  });
});
