import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Binding, defineKernel, InvalidArgumentError, type ParamType, storage, uniform, variantKey } from '../src';

/** A CPU model of WGSL's uniform layout for scalar members: align 4, size 4, struct rounded to 16 bytes. */
function modelUniformBytes(fields: readonly { type: ParamType; value: number }[]): Uint8Array {
  const alignOf = 4;
  const sizeOf = 4;
  let end = 0;
  const offsets = fields.map(() => {
    const at = Math.ceil(end / alignOf) * alignOf;
    end = at + sizeOf;
    return at;
  });
  const bytes = new Uint8Array(Math.max(16, Math.ceil(end / 16) * 16));
  const view = new DataView(bytes.buffer);
  fields.forEach((f, i) => {
    const at = offsets[i] as number;
    if (f.type === 'u32') view.setUint32(at, f.value, true);
    else if (f.type === 'i32') view.setInt32(at, f.value, true);
    else view.setFloat32(at, f.value, true);
  });
  return bytes;
}

const identifier = fc.stringMatching(/^[a-z][a-z0-9_]{0,7}$/);
const paramType = fc.constantFrom<ParamType>('u32', 'i32', 'f32');
const arbitraryValue = (type: ParamType) =>
  type === 'u32'
    ? fc.nat({ max: 0xffff_ffff })
    : type === 'i32'
      ? fc.integer({ min: -0x8000_0000, max: 0x7fff_ffff })
      : fc.float({ noNaN: true, noDefaultInfinity: true });
/** Distinct field names with a type and a value each. */
const paramFields = fc
  .uniqueArray(fc.tuple(identifier, paramType), { minLength: 1, maxLength: 20, selector: ([name]) => name })
  .chain((fields) => fc.tuple(...fields.map(([name, type]) => arbitraryValue(type).map((value) => ({ name, type, value })))));

/** A kernel whose source uses every binding: enough for the host half (nothing is compiled). */
function kernelWith(params: Record<string, ParamType>, storageNames: readonly string[] = ['data']) {
  const bindings: Record<string, ReturnType<typeof uniform> | ReturnType<typeof storage>> = { params: uniform() };
  for (const n of storageNames) bindings[n] = storage('read_write', 'u32');
  return defineKernel({
    name: 'test.layout',
    workgroupSize: 64,
    params,
    bindings,
    source: (decls) =>
      `${decls}\nfn main() { ${Object.keys(bindings)
        .map((n) => `_ = ${n};`)
        .join(' ')} }`,
  }).variant();
}

const fakeBuffer = (label: string) => ({ label }) as unknown as GPUBuffer;

describe('packParams', () => {
  it('writes every field where WGSL uniform layout puts it', () => {
    fc.assert(
      fc.property(paramFields, (fields) => {
        const kernel = kernelWith(Object.fromEntries(fields.map((f) => [f.name, f.type])));
        const words = kernel.packParams(Object.fromEntries(fields.map((f) => [f.name, f.value])));
        expect(new Uint8Array(words.buffer)).toEqual(modelUniformBytes(fields));
        expect(kernel.uniform.bytes % 16).toBe(0);
        expect(kernel.declarations.split('\n')[0]).toBe(`struct Params { ${fields.map((f) => `${f.name}: ${f.type}`).join(', ')} }`);
      }),
    );
  });

  it('refuses a missing field, an unknown field, and a value a u32 cannot hold', () => {
    fc.assert(
      fc.property(
        paramFields.filter((fs) => fs.length >= 2),
        fc.nat(),
        fc.oneof(
          fc.integer({ max: -1 }),
          fc.double({ min: 0.1, max: 1e9, noNaN: true }).filter((x) => !Number.isInteger(x)),
          fc.constant(2 ** 32),
          fc.constant(Number.NaN),
        ),
        (fields, pick, bad) => {
          const u32Fields = fields.map((f) => ({ ...f, type: 'u32' as const, value: 1 }));
          const kernel = kernelWith(Object.fromEntries(u32Fields.map((f) => [f.name, f.type])));
          const values: Record<string, number> = Object.fromEntries(u32Fields.map((f) => [f.name, f.value]));
          const victim = (u32Fields[pick % u32Fields.length] as { name: string }).name;
          const pack = (v: Record<string, number>) => () => kernel.packParams(v as never);
          const { [victim]: _, ...missing } = values;
          expect(pack(missing)).toThrow(InvalidArgumentError);
          expect(pack(missing)).toThrow(`'${victim}' is missing`);
          expect(pack({ ...values, not_declared: 1 })).toThrow(/unknown params field 'not_declared'/);
          expect(pack({ ...values, [victim]: bad })).toThrow(InvalidArgumentError);
        },
      ),
    );
  });

  it('fills fields left out with their declared defaults', () => {
    const k = defineKernel({
      name: 'test.defaults',
      workgroupSize: 64,
      params: { n: 'u32', mode: { type: 'u32', default: 0 }, bias: { type: 'i32', default: -1 } },
      bindings: { params: uniform(), data: storage('read', 'u32') },
      source: (decls) => `${decls}\nfn f() { _ = params; _ = data; }`,
    }).variant();
    expect([...k.packParams({ n: 7 })]).toEqual([7, 0, 0xffff_ffff, 0]);
    expect([...k.packParams({ n: 7, mode: 2 })]).toEqual([7, 2, 0xffff_ffff, 0]);
  });
});

describe('bindings by name', () => {
  const names = fc.uniqueArray(
    identifier.filter((n) => n !== 'params'),
    { minLength: 1, maxLength: 10 },
  );

  it('orders a complete record by declaration and refuses missing or unknown names', () => {
    fc.assert(
      fc.property(names, fc.nat(), identifier, (storageNames, pick, stranger) => {
        const kernel = kernelWith({ n: 'u32' }, storageNames);
        const all = ['params', ...storageNames];
        const record: Record<string, Binding> = Object.fromEntries([...all].reverse().map((n) => [n, fakeBuffer(n)]));
        expect(kernel.bindings(record as never).map((b) => (b as GPUBuffer).label)).toEqual(all);
        const victim = all[pick % all.length] as string;
        const { [victim]: _, ...missing } = record;
        expect(() => kernel.bindings(missing as never)).toThrow(new RegExp(`missing '${victim}'`));
        if (!all.includes(stranger)) {
          expect(() => kernel.bindings({ ...record, [stranger]: fakeBuffer(stranger) } as never)).toThrow(
            new RegExp(`unknown '${stranger}'`),
          );
        }
      }),
    );
  });

  it('refuses a buffer bound read_write and read in one pass, and allows read aliases', () => {
    const k = defineKernel({
      name: 'test.alias',
      workgroupSize: 64,
      bindings: { src: storage('read', 'u32'), also: storage('read', 'u32'), dst: storage('read_write', 'u32') },
      source: (decls) => `${decls}\nfn f() { _ = src; _ = also; _ = dst; }`,
    }).variant();
    const a = fakeBuffer('a');
    const b = fakeBuffer('b');
    expect(k.bindings({ src: a, also: a, dst: b })).toEqual([a, a, b]);
    expect(() => k.bindings({ src: a, also: b, dst: { buffer: a, offset: 256 } })).toThrow(/'dst' \(read_write\) and as 'src' \(read\)/);
  });

  it('refuses one buffer bound twice for writing over overlapping ranges, and allows disjoint ones', () => {
    const k = defineKernel({
      name: 'test.write-alias',
      workgroupSize: 64,
      bindings: { one: storage('read_write', 'u32'), two: storage('read_write', 'u32') },
      source: (decls) => `${decls}\nfn f() { _ = one; _ = two; }`,
    }).variant();
    const a = { label: 'a', size: 4096 } as unknown as GPUBuffer;
    const low = { buffer: a, offset: 0, size: 2048 };
    const high = { buffer: a, offset: 2048, size: 2048 };
    expect(k.bindings({ one: low, two: high })).toEqual([low, high]);
    expect(k.bindings({ one: low, two: { buffer: a, offset: 2048 } })).toEqual([low, { buffer: a, offset: 2048 }]);
    expect(() => k.bindings({ one: a, two: a })).toThrow(/'one' and as 'two' over overlapping ranges/);
    expect(() => k.bindings({ one: low, two: { buffer: a, offset: 2044 } })).toThrow(/overlapping ranges/);
  });
});

describe('variants', () => {
  const value = fc.oneof(fc.boolean(), fc.nat(1000), fc.constantFrom('u32', 'u64'));
  const defaults = fc.dictionary(identifier, value, { minKeys: 1, maxKeys: 8 });

  it('gives the same Kernel for one variant in any key order, and another key for another variant', () => {
    fc.assert(
      fc.property(defaults, fc.infiniteStream(value), fc.nat(), (base, values, seed) => {
        const family = defineKernel({
          name: 'test.variants',
          workgroupSize: 64,
          variant: base,
          bindings: { data: storage('read_write', 'u32') },
          source: (decls, v) => `// ${JSON.stringify(v)}\n${decls}\nfn f() { _ = data; }`,
        });
        const keys = Object.keys(base);
        const it = values[Symbol.iterator]();
        const chosen = Object.fromEntries(keys.map((k) => [k, it.next().value]));
        const shuffled = Object.fromEntries(
          [...keys].sort((x, y) => ((x.charCodeAt(0) * 31 + seed) % 7) - ((y.charCodeAt(0) * 31 + seed) % 7)).map((k) => [k, chosen[k]]),
        );
        const a = family.variant(chosen);
        expect(family.variant(shuffled)).toBe(a);
        expect(a.cacheKey).toBe(variantKey({ ...base, ...chosen }));
        const changed = keys[seed % keys.length] as string;
        const other = { ...chosen, [changed]: typeof chosen[changed] === 'boolean' ? !chosen[changed] : `${chosen[changed]}!` };
        const b = family.variant(other);
        expect(b).not.toBe(a);
        expect(b.cacheKey).not.toBe(a.cacheKey);
        expect(family.built).toBe(2);
      }),
    );
  });

  it('keys the defaults and an explicit copy of them alike, sorts nested fields, and refuses unknown fields and class instances', () => {
    const family = defineKernel({
      name: 'test.keys',
      workgroupSize: 64,
      variant: { assign: false, config: { wg: 128, items: 8 } },
      bindings: { data: storage('read_write', 'u32') },
      source: (decls) => `${decls}\nfn f() { _ = data; }`,
    });
    expect(family.variant()).toBe(family.variant({ assign: false }));
    expect(family.variant().cacheKey).toBe('assign=false,config={items=8,wg=128}');
    expect(() => family.variant({ asign: true } as never)).toThrow(/unknown variant field 'asign'/);
    expect(() => family.variant({ config: new Map() as never })).toThrow(/a Map object/);
  });
});

describe('definitions', () => {
  it('refuses a source without its declarations, and a binding the source never uses', () => {
    const spec = { name: 'test.bad', workgroupSize: 64, bindings: { used: storage('read', 'u32'), unused: storage('read_write', 'u32') } };
    expect(() => defineKernel({ ...spec, source: () => 'fn f() {}' }).variant()).toThrow(/include the declarations/);
    expect(() => defineKernel({ ...spec, source: (d) => `${d}\n// unused\nfn f() { _ = used; }` }).variant()).toThrow(
      /'unused' declared but never used/,
    );
  });

  it('refuses params without a uniform binding, and two uniforms', () => {
    expect(() =>
      defineKernel({
        name: 'x',
        workgroupSize: 64,
        params: { n: 'u32' },
        bindings: { d: storage('read', 'u32') },
        source: (d) => `${d} d`,
      }).variant(),
    ).toThrow(/no uniform\(\) binding/);
    expect(() =>
      defineKernel({
        name: 'x',
        workgroupSize: 64,
        params: { n: 'u32' },
        bindings: { a: uniform(), b: uniform() },
        source: (d) => `${d} a b`,
      }).variant(),
    ).toThrow(/both uniform/);
  });
});
