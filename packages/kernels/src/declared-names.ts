/**
 * Which identifiers a WGSL source declares at any scope: `var` (with or without an address space),
 * `let`, `const`, `override`, `fn`, `struct` and `alias`. A textual check, enough to catch a module
 * included into a kernel that lacks a binding it uses before Dawn compiles the variant.
 */

/** The source without comments (a commented-out declaration declares nothing). */
export function stripWgslComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, '');
}

const DECLARATION = /\b(?:var(?:\s*<[^>]*>)?|let|const|override|fn|struct|alias)\s+([A-Za-z_][A-Za-z0-9_]*)/g;

/** Every identifier the source declares. */
export function declaredNames(source: string): Set<string> {
  const names = new Set<string>();
  for (const match of stripWgslComments(source).matchAll(DECLARATION)) names.add(match[1] as string);
  return names;
}

/** The identifiers of `needs` the source does not declare, in the order given. */
export function undeclaredNeeds(source: string, needs: readonly string[]): string[] {
  if (needs.length === 0) return [];
  const declared = declaredNames(source);
  return needs.filter((id) => !declared.has(id));
}
