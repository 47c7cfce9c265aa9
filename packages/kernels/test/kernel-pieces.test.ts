import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  chunkLoop,
  composeWgsl,
  cooperativeEntryParams,
  entryPoint,
  FAILURE_FLAGS,
  failureListModule,
  gridModule,
  gridStrideLoop,
  tallyConstant,
  unrolled,
  workgroupTalliesModule,
} from '../src';

describe('entry point and loops', () => {
  it('emit the text the tables use today', () => {
    expect(entryPoint(256)).toMatchInlineSnapshot(`
      "@compute @workgroup_size(256)
      fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>)"
    `);
    expect(entryPoint(256, cooperativeEntryParams({ subgroups: true }))).toMatchInlineSnapshot(`
      "@compute @workgroup_size(256)
      fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(subgroup_invocation_id) cg_sg_lane: u32, @builtin(subgroup_size) cg_sg_size: u32)"
    `);
    expect(gridStrideLoop('i', 'params.n', 256)).toMatchInlineSnapshot(
      `"for (var i = grid_thread(wid, nwg, lid, 256u); i < params.n; i += grid_threads(nwg, 256u))"`,
    );
    expect(chunkLoop('params.n', 256)).toMatchInlineSnapshot(
      `"for (var base = grid_workgroup(wid, nwg) * 256u; base < params.n; base += grid_threads(nwg, 256u))"`,
    );
    expect(gridStrideLoop('i', 'params.n', 'COMPACT_WG')).toContain('grid_threads(nwg, COMPACT_WG)');
  });

  it('refuse sizes and names WGSL would not take', () => {
    expect(() => entryPoint(0)).toThrow(RangeError);
    expect(() => entryPoint(2000)).toThrow(RangeError);
    expect(() => gridStrideLoop('1i', 'params.n', 64)).toThrow(RangeError);
    expect(() => chunkLoop('params.n', 'not a name')).toThrow(RangeError);
  });
});

describe('failure list and tallies', () => {
  it('the failure list needs a failed binding', () => {
    expect(failureListModule.needs).toEqual(['failed']);
    expect(() => composeWgsl('fn main() {}', { modules: [failureListModule] })).toThrow(/'kernels.failure-list' needs 'failed'/);
    const ok = composeWgsl('@group(0) @binding(0) var<storage, read_write> failed: array<atomic<u32>>;', { modules: [failureListModule] });
    expect(ok).toContain(`const FAILURE_RESERVED: u32 = 0x${FAILURE_FLAGS.reserved.toString(16)}u;`);
  });

  it('tallies number their constants in order and apply each in its own case', () => {
    expect(tallyConstant('lockAcquisitions')).toBe('T_LOCK_ACQUISITIONS');
    const m = workgroupTalliesModule(
      'test.t',
      { added: 'atomicAdd(&c[0], v);', erased: 'atomicSub(&c[0], v);', stashIn: 'atomicAdd(&c[1], v);' },
      { needs: ['c'] },
    );
    expect(m.code).toContain('const T_STASH_IN: u32 = 2u;');
    expect(m.code).toContain('case 1u: { atomicSub(&c[0], v); }');
    expect(m.code).toContain('default: { atomicAdd(&c[1], v); }');
    expect(() => composeWgsl('fn main() {}', { modules: [gridModule, m] })).toThrow(/needs 'c'/);
    expect(() => workgroupTalliesModule('test.none', {})).toThrow(RangeError);
  });
});

describe('unrolled', () => {
  it('emits line(k) for every k in order, between separators, as a loop would', () => {
    fc.assert(
      fc.property(fc.nat({ max: 40 }), fc.constantFrom('\n', ', ', ''), (count, separator) => {
        const line = (k: number) => `var w${k} = ${3 * k}u;`;
        let looped = '';
        for (let k = 0; k < count; k++) looped += (k > 0 ? separator : '') + line(k);
        expect(unrolled(count, line, separator)).toBe(looped);
      }),
    );
    expect(() => unrolled(-1, String)).toThrow(RangeError);
    expect(() => unrolled(1.5, String)).toThrow(RangeError);
  });
});
