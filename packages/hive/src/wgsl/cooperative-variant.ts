import { cooperativeModule, type WgslModule, wgslModule } from '@gpuhash/kernels';
import { commonModule } from './common';

const variants = new Map<string, WgslModule>();

/**
 * A WGSL module in two variants, over subgroups or over groups of one invocation; it requires the
 * common declarations and the matching cooperative module. `needs` names the bindings its code
 * uses, which the including kernel declares.
 */
export function cooperativeVariant(
  name: string,
  subgroups: boolean,
  code: string,
  deps: { requires?: readonly WgslModule[]; needs?: readonly string[] } = {},
): WgslModule {
  const key = `${name}.${subgroups ? 'sg' : 'fb'}`;
  let m = variants.get(key);
  if (!m) {
    const requires = [commonModule, cooperativeModule({ subgroups }), ...(deps.requires ?? [])];
    variants.set(key, (m = wgslModule(key, code, { requires, needs: deps.needs ?? [] })));
  }
  return m;
}
