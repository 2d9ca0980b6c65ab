// One jest run covers unit tests (beside the code) and integration tests (tests/).
// TypeScript is compiled by SWC as native ESM; run through `pnpm test`, which enables Node's VM modules.
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }],
};
const common = { extensionsToTreatAsEsm: ['.ts'], transform, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };

export default {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/packages/*/src/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/tests/{conformance,e2e,integration}/**/*.test.ts', '<rootDir>/packages/*/test/**/*.test.ts'],
      testTimeout: 60000,
    },
  ],
  testTimeout: 60000,
  // the CLI built once for the gatehouse processes the tests spawn (tests/support/cli-build.mjs)
  globalSetup: '<rootDir>/tests/support/cli-build.mjs',
  reporters: ['default', '<rootDir>/tests/support/summary-reporter.cjs'],
  maxWorkers: 2,
};
