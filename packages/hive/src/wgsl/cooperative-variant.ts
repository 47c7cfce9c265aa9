import { cooperativeVariantModule, type WgslModule } from '@gpuhash/kernels';
import { commonModule } from './common';

/**
 * A Hive WGSL module in two variants, over subgroups or over groups of one invocation (kernels'
 * cooperativeVariantModule); it requires Hive's common declarations besides the matching
 * cooperative module. `needs` names the bindings its code uses, which the including kernel declares.
 */
export function cooperativeVariant(
  name: string,
  subgroups: boolean,
  code: string,
  deps: { requires?: readonly WgslModule[]; needs?: readonly string[] } = {},
): WgslModule {
  return cooperativeVariantModule(name, subgroups, code, { requires: [commonModule, ...(deps.requires ?? [])], needs: deps.needs ?? [] });
}
