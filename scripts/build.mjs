#!/usr/bin/env node
// `pnpm build`: every package's entry points compiled to JavaScript in its dist/ with esbuild (the sources import
// each other extensionless, moduleResolution Bundler, which plain tsc output could not run). Each output is one ESM
// file with the workspace packages and their dependencies inlined, except the packages listed as `dependencies` of
// the CLI (native, WebAssembly or static assets, installed in production) and optional natives that are never
// installed. `pnpm typecheck` stays the type check; this only transpiles.
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = JSON.parse(readFileSync(`${root}packages/cli/package.json`, 'utf8'));

/** loaded by their dependents only when present, none of them installed: pg's native binding, ws's accelerators */
const OPTIONAL_NATIVES = ['pg-native', 'bufferutil', 'utf-8-validate'];
export const EXTERNAL = [...Object.keys(cli.dependencies ?? {}), ...OPTIONAL_NATIVES];

/**
 * kysely-pglite's entry also re-exports its code generator (kysely-codegen with jiti, shelljs, fast-glob, …); the
 * dialect we use is its own module, so the bundle takes that one.
 */
const pgliteDialectOnly = {
  name: 'kysely-pglite-dialect-only',
  setup(b) {
    b.onResolve({ filter: /^kysely-pglite$/ }, async (args) => {
      if (args.pluginData === 'inner') return undefined;
      const entry = await b.resolve('kysely-pglite', { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'inner' });
      if (entry.errors.length) return { errors: entry.errors };
      return { path: entry.path.replace(/index\.js$/, 'kysely-pglite.js') };
    });
  },
};

const PACKAGES = {
  core: ['src/index.ts'],
  plugins: ['src/index.ts'],
  sync: ['src/index.ts'],
  'control-plane': ['src/index.ts'],
  'data-plane': ['src/index.ts'],
  testkit: ['src/index.ts'],
  cli: ['src/index.ts', 'src/main.ts'],
};

// bundled CommonJS code may require Node's built-ins or use __dirname: give the ESM output what it expects
const banner = [
  "import { createRequire as __gatehouseCreateRequire } from 'node:module';",
  "import { fileURLToPath as __gatehouseFileURLToPath } from 'node:url';",
  "import { dirname as __gatehouseDirname } from 'node:path';",
  'const require = __gatehouseCreateRequire(import.meta.url);',
  'const __filename = __gatehouseFileURLToPath(import.meta.url);',
  'const __dirname = __gatehouseDirname(__filename);',
].join('\n');

const started = Date.now();
for (const [name, entries] of Object.entries(PACKAGES)) {
  const dir = `${root}packages/${name}`;
  rmSync(`${dir}/dist`, { recursive: true, force: true });
  await build({
    absWorkingDir: dir,
    entryPoints: entries,
    outdir: 'dist',
    outbase: 'src',
    bundle: true,
    splitting: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: true,
    external: EXTERNAL,
    banner: { js: banner },
    plugins: [pgliteDialectOnly],
    logLevel: 'warning',
  });
}
process.stdout.write(`built ${Object.keys(PACKAGES).length} packages in ${Date.now() - started} ms (external: ${EXTERNAL.join(', ')})\n`);
