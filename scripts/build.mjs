#!/usr/bin/env node
// `pnpm build`: every package's entry points compiled to JavaScript in its dist/ with esbuild (the sources import
// each other extensionless, moduleResolution Bundler, which plain tsc output could not run). Each output is one ESM
// file with the workspace packages and their dependencies inlined, except the packages listed as `dependencies` of
// the CLI (native, WebAssembly or static assets, installed in production) and optional natives that are never
// installed. `pnpm typecheck` stays the type check; this only transpiles.
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/**
 * V8 keeps a script's source for as long as its functions may be compiled, as one-byte characters when every character
 * fits in one byte and as two-byte ones otherwise: a single curly quote in a bundled comment doubles what the CLI's
 * 7 MB bundle costs every process. esbuild escapes what is not ASCII in code (charset 'ascii'); what is left are
 * comments, where each such UTF-16 unit becomes '?' (one for one, so the source map's columns still hold).
 */
export function asciiComments(file) {
  const text = readFileSync(file, 'utf8');
  if (!/[\u0080-\uffff]/.test(text)) return;
  const lines = text.split('\n');
  let inBlock = false;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const opens = line.lastIndexOf('/*');
    const closes = line.lastIndexOf('*/');
    const blockAtStart = inBlock;
    inBlock = opens > closes ? true : closes > opens ? false : inBlock;
    const first = line.search(/[\u0080-\uffff]/);
    if (first < 0) continue;
    const trimmed = line.trimStart();
    const inComment =
      blockAtStart || trimmed.startsWith('//') || trimmed.startsWith('*') || trimmed.startsWith('/*') || (line.indexOf('//') >= 0 && line.indexOf('//') < first) || (opens >= 0 && opens < first);
    if (!inComment) throw new Error(`${file}:${n + 1}: a character outside ASCII in code, not in a comment`);
    lines[n] = line.replace(/[\u0080-\uffff]/g, '?');
  }
  writeFileSync(file, lines.join('\n'));
}

/** esbuild's options for one package's entry points (paths relative to packages/<name>), written to its dist/ */
export function packageBuildOptions(name, entries) {
  return {
    absWorkingDir: `${root}packages/${name}`,
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
    charset: 'ascii',
    logLevel: 'warning',
  };
}

// imported (by the tests' build of the CLI) it only lends its options; run, it builds every package
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = Date.now();
  for (const [name, entries] of Object.entries(PACKAGES)) {
    const dir = `${root}packages/${name}`;
    rmSync(`${dir}/dist`, { recursive: true, force: true });
    await build(packageBuildOptions(name, entries));
    for (const file of readdirSync(`${dir}/dist`)) if (file.endsWith('.js')) asciiComments(`${dir}/dist/${file}`);
  }
  process.stdout.write(`built ${Object.keys(PACKAGES).length} packages in ${Date.now() - started} ms (external: ${EXTERNAL.join(', ')})\n`);
}
