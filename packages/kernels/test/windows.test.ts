import { describeChecks } from '@gpuhash/testing/vitest';
import { describe, expect, it } from 'vitest';
import { composeWgsl, rewriteWindowedAccesses, type StorageWindows, WindowedAccessError, wgslModule, windowedViews } from '../src';
import { windowsChecks } from './windows.checks';

const slots: StorageWindows = { name: 'slots', element: 'atomic<u32>', count: 4, elementsLog2: 27 };
const ro: StorageWindows = { name: 'slots_ro', element: 'vec4<u32>', count: 4, elementsLog2: 25 };

describe('rewriteWindowedAccesses', () => {
  it('turns each access form into its accessor call, nested indices included', () => {
    const src = [
      'let k = atomicLoad(&slots[2u * ((s + 1u) & params.mask)]);',
      'atomicStore(&slots[2u * s + 1u], value);',
      'let r = atomicCompareExchangeWeak( & slots [2u * s], EMPTY, key);',
      'let q = slots_ro[(p + 3u) & (pairs - 1u)].x;',
      'old_slots[i] = slots_ro[idx[i]];',
    ].join('\n');
    expect(rewriteWindowedAccesses(src, [slots, ro])).toBe(
      [
        'let k = slots_atomicLoad(2u * ((s + 1u) & params.mask));',
        'slots_atomicStore(2u * s + 1u, value);',
        'let r = slots_atomicCompareExchangeWeak(2u * s, EMPTY, key);',
        'let q = slots_ro_load((p + 3u) & (pairs - 1u)).x;',
        'old_slots[i] = slots_ro_load(idx[i]);',
      ].join('\n'),
    );
  });

  it('rewrites plain stores, and leaves comparisons alone', () => {
    const pairs: StorageWindows = { name: 'pairs', element: 'vec2<u32>', count: 2, elementsLog2: 3 };
    expect(rewriteWindowedAccesses('pairs[b + s] = vec2<u32>(pairs[s].y, 1u);', [pairs])).toBe(
      'pairs_store(b + s, vec2<u32>(pairs_load(s).y, 1u));',
    );
    expect(rewriteWindowedAccesses('if (pairs[s] == v) {}', [pairs])).toBe('if (pairs_load(s) == v) {}');
  });

  it('rewrites a store to one component of a vector element, and reads of one', () => {
    expect(rewriteWindowedAccesses('slots_ro[w / 4u][w % 4u] = slots_ro[j][k] + 1u;', [ro])).toBe(
      'slots_ro_store_component(w / 4u, w % 4u, slots_ro_load(j)[k] + 1u);',
    );
    const decls = [0, 1].map((k) => `@group(0) @binding(${k}) var<storage, read_write> v_${k}: array<vec4<u32>>;`).join('\n');
    const v: StorageWindows = { name: 'v', element: 'vec4<u32>', count: 2, elementsLog2: 4 };
    const source = composeWgsl(`${decls}\nfn put(w: u32) { v[w / 4u][w % 4u] = 7u; }`, { windows: [v] });
    expect(source).toMatch(/fn v_store_component\(e: u32, c: u32, v: u32\)/);
    expect(source).toMatch(/default: \{ v_1\[o\]\[c\] = v; \}/);
    expect(() => composeWgsl('fn put(w: u32) { slots[w][0u] = 7u; }', { windows: [{ ...slots, count: 2 }] })).toThrow(/vector elements/);
  });

  it('splits views of one array at the same bytes, and not at all in one window', () => {
    expect(windowedViews(1, 30, { slots: 'u32' })).toEqual([]);
    expect(windowedViews(3, 30, { slots: 'atomic<u32>', slots_v4: 'vec4<u32>' })).toEqual([
      { name: 'slots', element: 'atomic<u32>', count: 3, elementsLog2: 28 },
      { name: 'slots_v4', element: 'vec4<u32>', count: 3, elementsLog2: 26 },
    ]);
    expect(() => windowedViews(2, 30, { slots: 'f16' })).toThrow(WindowedAccessError);
  });

  it('refuses what an accessor cannot stand for', () => {
    expect(() => rewriteWindowedAccesses('let n = arrayLength(&slots);', [slots])).toThrow(WindowedAccessError);
    expect(() => rewriteWindowedAccesses('let p = &slots[i];', [slots])).toThrow(/pointer/);
    expect(() => rewriteWindowedAccesses('atomicFoo(&slots[i]);', [slots])).toThrow(/no windowed accessor/);
  });

  it('composes with modules that need the windowed array, emitting only the accessors used', () => {
    const m = wgslModule('uses-slots', 'fn first() -> u32 { return atomicLoad(&slots[0u]); }', { needs: ['slots'] });
    const decls = [
      '@group(0) @binding(0) var<storage, read_write> slots_0: array<atomic<u32>>;',
      '@group(0) @binding(1) var<storage, read_write> slots_1: array<atomic<u32>>;',
    ].join('\n');
    const two = { ...slots, count: 2 };
    const source = composeWgsl(decls, { modules: [m], windows: [two] });
    expect(source).toMatch(/fn slots_atomicLoad\(e: u32\) -> u32/);
    expect(source).not.toMatch(/slots_atomicStore/);
    expect(source).toMatch(/case 0u: \{ r = atomicLoad\(&slots_0\[o\]\); \}/);
    expect(source).toMatch(/default: \{ r = atomicLoad\(&slots_1\[o\]\); \}/);
    expect(() => composeWgsl('', { modules: [m] })).toThrow(/needs 'slots'/);
  });
});

describeChecks(windowsChecks);
