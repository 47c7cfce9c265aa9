import { createRng } from '@gpuhash/testing';
import { describeChecks } from '@gpuhash/testing/vitest';
import { describe, expect, it } from 'vitest';
import {
  compactCpu,
  DEFAULT_SCAN_CONFIG,
  exclusiveScanCpu,
  scanBlockSize,
  scanBlockSumsCpu,
  scanDownsweepWgsl,
  scanLevelSizes,
  scanReduceWgsl,
  scanWorkgroupBytes,
  validateScanConfig,
} from '../src/scan';
import { scanChecks } from './scan.checks';

describe('scan CPU twins', () => {
  it('exclusiveScanCpu: prefix sums that wrap mod 2^32', () => {
    expect(Array.from(exclusiveScanCpu(new Uint32Array([])))).toEqual([]);
    expect(Array.from(exclusiveScanCpu(new Uint32Array([5])))).toEqual([0]);
    expect(Array.from(exclusiveScanCpu(new Uint32Array([1, 2, 3, 4])))).toEqual([0, 1, 3, 6]);
    expect(Array.from(exclusiveScanCpu(new Uint32Array([0xffffffff, 0xffffffff, 2, 7])))).toEqual([0, 0xffffffff, 0xfffffffe, 0]);
    expect(Array.from(exclusiveScanCpu(new Uint32Array([9, 0, 0x80000000, 1]), true))).toEqual([0, 1, 1, 2]);
  });

  it('exclusiveScanCpu agrees with a BigInt reference on random input', () => {
    const rng = createRng(21);
    const input = rng.u32Array(5000);
    const out = exclusiveScanCpu(input);
    let acc = 0n;
    for (let i = 0; i < input.length; i++) {
      expect(out[i]).toBe(Number(acc % 2n ** 32n));
      acc += BigInt(input[i] as number);
    }
  });

  it('scanBlockSumsCpu: one sum per block, the last one partial', () => {
    const input = new Uint32Array([1, 2, 3, 4, 5, 0xffffffff, 1]);
    expect(Array.from(scanBlockSumsCpu(input, 3))).toEqual([6, 4 + 5 + 0xffffffff - 2 ** 32, 1]);
    expect(Array.from(scanBlockSumsCpu(new Uint32Array([0, 7, 7, 0]), 2, true))).toEqual([1, 1]);
  });

  it('compactCpu keeps nonzero-flagged values and their indices in order', () => {
    const r = compactCpu(new Uint32Array([10, 11, 12, 13, 14]), new Uint32Array([0, 5, 0, 0xffffffff, 1]));
    expect(r.count).toBe(3);
    expect(Array.from(r.values)).toEqual([11, 13, 14]);
    expect(Array.from(r.indices)).toEqual([1, 3, 4]);
    expect(compactCpu(new Uint32Array(0), new Uint32Array(0)).count).toBe(0);
    expect(() => compactCpu(new Uint32Array(2), new Uint32Array(3))).toThrow(RangeError);
  });

  it('scan positions equal compaction positions for the same flags', () => {
    const rng = createRng(22);
    const flags = new Uint32Array(3000).map(() => (rng.below(3) === 0 ? rng.u32() | 1 : 0));
    const positions = exclusiveScanCpu(flags, true);
    const { indices } = compactCpu(new Uint32Array(flags.length), flags);
    for (const [o, index] of indices.entries()) expect(positions[index]).toBe(o);
  });
});

describe('scan configuration and sources', () => {
  it('levels shrink by the block size down to one block', () => {
    expect(scanLevelSizes(0, 8)).toEqual([]);
    expect(scanLevelSizes(8, 8)).toEqual([8]);
    expect(scanLevelSizes(9, 8)).toEqual([9, 2]);
    expect(scanLevelSizes(513, 8)).toEqual([513, 65, 9, 2]);
    expect(scanLevelSizes(300_000, scanBlockSize(DEFAULT_SCAN_CONFIG))).toEqual([300_000, 293]);
  });

  it('rejects shapes the kernels cannot run', () => {
    expect(() => validateScanConfig({ workgroupSize: 6, itemsPerThread: 2 })).toThrow(RangeError);
    expect(() => validateScanConfig({ workgroupSize: 1, itemsPerThread: 1 })).toThrow(RangeError);
    expect(() => validateScanConfig({ workgroupSize: 256, itemsPerThread: 0 })).toThrow(RangeError);
    expect(() => scanDownsweepWgsl(DEFAULT_SCAN_CONFIG, { kind: 'compact', values: false, indices: false })).toThrow(RangeError);
    expect(scanWorkgroupBytes(DEFAULT_SCAN_CONFIG)).toBeLessThanOrEqual(16384);
  });

  it('sources carry the block shape as constants and use no subgroup operations', () => {
    const src = scanReduceWgsl({ workgroupSize: 4, itemsPerThread: 2 });
    expect(src).toContain('const SCAN_WG: u32 = 4u;');
    expect(src).toContain('const SCAN_ITEMS: u32 = 2u;');
    for (const variant of [{ kind: 'scan' }, { kind: 'scan-in-place' }, { kind: 'compact', values: true, indices: true }] as const) {
      expect(scanDownsweepWgsl(DEFAULT_SCAN_CONFIG, variant)).not.toMatch(/subgroup/);
    }
  });
});

describeChecks(scanChecks);
