import type { KeyLayout } from './layout';
import { u32Layout } from './layout-u32';
import { u64Layout } from './layout-u64';

/** The layout a kernel variant names: variants carry the name, so the cache key stays a plain string. */
export function keyLayout(name: KeyLayout['name']): KeyLayout {
  return name === 'u64' ? u64Layout : u32Layout;
}
