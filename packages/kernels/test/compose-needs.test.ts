import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composeWgsl, declaredNames, WgslCompositionError, wgslModule } from '../src';

const identifier = fc
  .stringMatching(/^[a-z][a-z0-9_]{0,6}$/)
  .filter((s) => !['var', 'let', 'const', 'fn', 'struct', 'alias', 'override'].includes(s));

/** Ways a kernel can declare a name, each a complete WGSL fragment. */
const declarations: ((name: string) => string)[] = [
  (n) => `@group(0) @binding(0) var<storage, read_write> ${n}: array<atomic<u32>>;`,
  (n) => `var<uniform> ${n}: Params;`,
  (n) => `var<private> ${n}: u32;`,
  (n) => `const ${n}: u32 = 1u;`,
  (n) => `override ${n}: u32 = 1u;`,
  (n) => `fn ${n}(x: u32) -> u32 { return x; }`,
  (n) => `struct ${n} { a: u32 }`,
  (n) => `alias ${n} = u32;`,
  (n) => `fn holder() { let ${n} = 1u; var ${n}_v = 2u; }`,
];

describe('module needs', () => {
  it('compose passes exactly when every needed identifier is declared, and names the module and the missing one', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(identifier, { minLength: 1, maxLength: 6 }),
        fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
        fc.array(fc.nat(declarations.length - 1), { minLength: 6, maxLength: 6 }),
        (needs, declared, forms) => {
          const uses = wgslModule('test.user', `fn user() { _ = ${needs.join(' + ')}; }`, { needs });
          const kernel = needs
            .map((n, i) =>
              declared[i]
                ? (declarations[forms[i] as number] as (n: string) => string)(n)
                : `// var ${n}: u32; (a comment declares nothing)`,
            )
            .join('\n');
          const missing = needs.filter((_, i) => !declared[i]);
          const compose = () => composeWgsl(kernel, { modules: [uses] });
          if (missing.length === 0) {
            expect(compose()).toContain('fn user()');
          } else {
            let error: unknown;
            try {
              compose();
            } catch (e) {
              error = e;
            }
            expect(error).toBeInstanceOf(WgslCompositionError);
            expect((error as WgslCompositionError).module).toBe('test.user');
            expect((error as WgslCompositionError).identifier).toBe(missing[0]);
            expect((error as Error).message).toContain(`'test.user' needs '${missing[0]}'`);
          }
        },
      ),
    );
  });

  it('a declaration of a longer name does not declare a prefix of it', () => {
    expect(declaredNames('var<private> params2: u32; fn params_of() {}').has('params')).toBe(false);
    const m = wgslModule('test.p', 'fn f() -> u32 { return params.n; }', { needs: ['params'] });
    expect(() => composeWgsl('var<private> params2: u32;', { modules: [m] })).toThrow(/needs 'params'/);
  });

  it('needs of required modules are checked too, against the whole shader (a module may declare what another needs)', () => {
    const inner = wgslModule('test.inner', 'fn g() -> u32 { return SIZE; }', { needs: ['SIZE'] });
    const outer = wgslModule('test.outer', 'const SIZE: u32 = 4u;\nfn h() -> u32 { return g(); }', { requires: [inner] });
    expect(composeWgsl('fn main() {}', { modules: [outer] })).toContain('const SIZE');
    expect(() => composeWgsl('fn main() {}', { modules: [inner] })).toThrow(/'test.inner' needs 'SIZE'/);
  });

  it('modules without needs, in the older positional form, compose as before', () => {
    const a = wgslModule('test.a', 'fn a() {}');
    const b = wgslModule('test.b', 'fn b() { a(); }', [a], ['subgroups']);
    expect(b.requires).toEqual([a]);
    const src = composeWgsl('fn main() { b(); }', { modules: [b] });
    expect(src.startsWith('enable subgroups;')).toBe(true);
    expect(src.indexOf('fn a()')).toBeLessThan(src.indexOf('fn b()'));
  });

  it('refuses a need that is not an identifier', () => {
    expect(() => wgslModule('test.bad', '', { needs: ['not an identifier'] })).toThrow(WgslCompositionError);
  });
});
