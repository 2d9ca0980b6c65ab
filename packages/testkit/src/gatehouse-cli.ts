import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** the CLI's sources, run through tsx when there is no build of them */
export const GATEHOUSE_CLI_SOURCE = join(ROOT, 'packages/cli/src/main.ts');

/**
 * Node's arguments that run `gatehouse <args>`: the one-file build of the CLI that Jest's global set-up made
 * (tests/support/cli-build.mjs, named by GATEHOUSE_TEST_CLI), which starts in about half the time, or else the
 * sources through tsx.
 */
export function gatehouseNodeArgs(...args: string[]): string[] {
  const built = process.env.GATEHOUSE_TEST_CLI;
  return built ? [built, ...args] : ['--import', 'tsx', GATEHOUSE_CLI_SOURCE, ...args];
}
