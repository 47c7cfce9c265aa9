import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { DefaultTheme } from 'vitepress';

const apiDir = fileURLToPath(new URL('../src/api', import.meta.url));

/** Sidebar entries for the generated API pages (one per package), in file-name order. */
export function apiSidebar(): DefaultTheme.SidebarItem[] {
  if (!existsSync(apiDir)) return [];
  return readdirSync(apiDir)
    .filter((f) => f.endsWith('.md') && f !== 'index.md')
    .sort()
    .map((f) => {
      const name = f.replace(/\.md$/, '');
      return { text: `@gpuhash/${name}`, link: `/api/${name}` };
    });
}
