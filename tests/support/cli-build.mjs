// Jest's global set-up: the CLI compiled to one JavaScript file (the options of `pnpm build`, no source map) for the
// gatehouse processes the tests spawn, which then start without TypeScript tooling (tsx took twice as long a start).
// It goes to packages/cli/node_modules/.cache (where the CLI's runtime dependencies resolve, and which `pnpm build`
// and packages/cli/test/dist.test.ts leave alone) and is reused while none of the files it was built from changed.
// It is used with GATEHOUSE_TEST_BUILT_CLI=1; by default the processes run the sources through tsx, as they do when
// the build fails (with a warning): with the one-file build, the cluster data plane of proxy-connections.test.ts's
// chunked request-size-limiting refusal sometimes has its connection reset before the client reads the 413 (a race
// the slower start-up of tsx hides, under investigation), so the default stays on the sources until that is fixed.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { asciiComments, packageBuildOptions } from '../../scripts/build.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI_DIR = `${ROOT}packages/cli/`;
const OUT_DIR = `${CLI_DIR}node_modules/.cache/gatehouse-tests`;
const MAIN = `${OUT_DIR}/main.js`;
/** the files the last build read (paths relative to packages/cli), beside it */
const INPUTS = `${OUT_DIR}/inputs.json`;

/** whether the last build is newer than every file it read, and than this script and scripts/build.mjs */
function upToDate() {
  if (!existsSync(MAIN) || !existsSync(INPUTS)) return false;
  const builtAt = statSync(MAIN).mtimeMs;
  const inputs = [...JSON.parse(readFileSync(INPUTS, 'utf8')).map((file) => `${CLI_DIR}${file}`), fileURLToPath(import.meta.url), `${ROOT}scripts/build.mjs`];
  return inputs.every((file) => existsSync(file) && statSync(file).mtimeMs < builtAt);
}

async function buildCli() {
  const started = Date.now();
  const result = await build({ ...packageBuildOptions('cli', ['src/main.ts']), outdir: undefined, outbase: undefined, outfile: MAIN, sourcemap: false, metafile: true, write: false });
  mkdirSync(OUT_DIR, { recursive: true });
  // written beside and renamed, so a process starting meanwhile (another run's) never reads half a file
  const partial = `${MAIN}.${process.pid}`;
  writeFileSync(partial, result.outputFiles[0].contents);
  asciiComments(partial);
  renameSync(partial, MAIN);
  writeFileSync(INPUTS, JSON.stringify(Object.keys(result.metafile.inputs)));
  process.stderr.write(`\nbuilt the CLI for the tests' gatehouse processes in ${Date.now() - started} ms\n`);
}

export default async function globalSetup() {
  if (process.env.GATEHOUSE_TEST_BUILT_CLI !== '1') return;
  try {
    if (!upToDate()) await buildCli();
    process.env.GATEHOUSE_TEST_CLI = MAIN;
  } catch (err) {
    process.stderr.write(`\nthe tests' build of the CLI failed; gatehouse processes run the sources through tsx:\n${err instanceof Error ? err.message : String(err)}\n`);
  }
}
