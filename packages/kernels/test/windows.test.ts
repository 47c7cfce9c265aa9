import { describeChecks } from '@gpuhash/testing/vitest';
import { describe, expect, it } from 'vitest';
import { composeWgsl, rewriteWindowedAccesses, type StorageWindows, WindowedAccessError, wgslModule } from '../src';
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
