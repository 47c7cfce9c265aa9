// Generates the API reference (markdown) from the packages' TSDoc into src/api/, before the
// VitePress build or dev server starts. The output is git-ignored: the sources are the truth.
import { readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { apiPackages } from '../../../tools/workspace/packages.mjs';

const docs = fileURLToPath(new URL('..', import.meta.url));
const repo = fileURLToPath(new URL('../../..', import.meta.url));
const out = `${docs}src/api`;

/** The packages the reference covers, in sidebar order: every package under packages/ (its `gpuhash.order`). */
export const API_PACKAGES = apiPackages();

// Run as a script (importing the module only reads API_PACKAGES).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await generate();

async function generate() {
  const { Application, Converter } = await import('typedoc');
  const started = Date.now();
  await rm(out, { recursive: true, force: true });
  const app = await Application.bootstrapWithPlugins({
    entryPointStrategy: 'packages',
    entryPoints: API_PACKAGES.map((p) => `${repo}packages/${p}`),
    packageOptions: {
      readme: 'none',
      disableGit: true,
      disableSources: true,
      entryPoints: ['src/index.ts'],
      skipErrorChecking: true,
      excludePrivate: true,
      excludeInternal: true,
    },
    plugin: ['typedoc-plugin-markdown'],
    out,
    name: 'API reference',
    readme: 'none',
    skipErrorChecking: true,
    excludePrivate: true,
    excludeInternal: true,
    excludeExternals: true,
    githubPages: false,
    disableSources: true,
    disableGit: true,
    hidePageHeader: true,
    hideBreadcrumbs: true,
    entryFileName: 'index',
    outputFileStrategy: 'modules',
    useCodeBlocks: true,
    parametersFormat: 'table',
    interfacePropertiesFormat: 'table',
    classPropertiesFormat: 'table',
    logLevel: 'Warn',
  });
  dropBuiltinMembers(app, Converter);
  const project = await app.convert();
  if (!project) {
    console.error('api: TypeDoc could not convert the packages (see the messages above).');
    process.exit(1);
  }
  await app.generateOutputs(project);
  await flatten();
  console.log(`api: reference for ${API_PACKAGES.join(', ')} written to src/api in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

/** Moves `api/@gpuhash/core.md` to `api/core.md` (shorter URLs) and fixes the index's links. */
async function flatten() {
  const scoped = `${out}/@gpuhash`;
  for (const file of await readdir(scoped)) await rename(`${scoped}/${file}`, `${out}/${file}`);
  await rmdir(scoped);
  const index = `${out}/index.md`;
  await writeFile(index, (await readFile(index, 'utf8')).replaceAll('](@gpuhash/', ']('));
}

/**
 * Error subclasses inherit stack, cause, captureStackTrace... from the standard library; listing
 * them on every error class buries what gpuhash adds, so members declared only there are dropped.
 */
function dropBuiltinMembers(app, Converter) {
  const builtin = /node_modules[\\/](typescript|@types)[\\/]/;
  const doomed = [];
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    const declarations = context.getSymbolFromReflection(reflection)?.declarations ?? [];
    if (declarations.length > 0 && declarations.every((d) => builtin.test(d.getSourceFile().fileName))) doomed.push(reflection);
  });
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const r of doomed) context.project.removeReflection(r);
  });
}
