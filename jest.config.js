/**
 * Jest, in tiers:
 * - small: everything in-process on in-memory ports (libs/testing fake-store.ts, the in-process bus),
 *   routers driven through `app.callback()` with no port; no broker, no database; seconds in all.
 * - medium: the adapters against the real technology (SQLite, RabbitMQ, MongoDB when present, the
 *   QuickJS sandbox, the disk): the adapter libraries' own tests, the contract suites, and any
 *   `*.medium.test.ts` (a service on real adapters).
 * - e2e: the built service as real processes over HTTP (`npm run build` first).
 * Beside them: security (`*.security.ts`: the attack surface, in-process or against the built service;
 * docs/security.md), browser (the web console in headless Chromium), and faults, which restart the
 * shared RabbitMQ broker, with the timing comparisons of the built services (`*.timing.ts`). `npm test`
 * runs small, e2e, security and browser on three workers (they mostly wait on the processes they start),
 * then medium on one (the sandbox's tests hold time bounds that a shared CPU breaks), then faults alone.
 */
const { pathsToModuleNameMapper } = require('./tools/jest-paths');
/**
 * npm packages published as ES modules only, which jest (CommonJS on Node 20) must compile: openapi-backend's
 * reference parser, and GitHub's signature library (an oracle of the inbound schemes' tests), whose exports
 * name an `import` file only, mapped below.
 */
const ESM_PACKAGES = ['@apidevtools/json-schema-ref-parser', '@octokit/webhooks-methods'];
const ESM_ENTRIES = { '^@octokit/webhooks-methods$': '<rootDir>/node_modules/@octokit/webhooks-methods/dist-node/index.js' };
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }],
  [`/node_modules/(${ESM_PACKAGES.join('|')})/.+\\.js$`]: ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
};
const transformIgnorePatterns = [`/node_modules/(?!(${ESM_PACKAGES.join('|')})/)`];
/** The mutation check's copies of the repository (stryker.config.mjs), while one runs. */
const modulePathIgnorePatterns = ['<rootDir>/.stryker-tmp/'];
/**
 * A test's time limit where its own says nothing: a test bounded by its work, not by time (a property test
 * of the sandbox, a QuickJS thread starting), must not fail because the tiers share two cores; a hang still
 * fails. Tests whose subject is time assert their bounds themselves.
 */
const testTimeout = 30_000;
const common = { testEnvironment: 'node', transform, transformIgnorePatterns, modulePathIgnorePatterns, moduleNameMapper: { ...pathsToModuleNameMapper(), ...ESM_ENTRIES }, rootDir: __dirname };
const setup = { setupFilesAfterEnv: ['<rootDir>/apps/e2e/src/jest.setup.ts'] };

/** The adapters whose own tests run the technology they wrap. */
const ADAPTERS = ['store-sqlite', 'store-mongo', 'bus-amqp', 'files-disk', 'files-gridfs', 'sandbox'];

module.exports = {
  testTimeout,
  projects: [
    {
      ...common,
      displayName: 'small',
      testMatch: ['<rootDir>/{apps,libs}/**/*.test.ts', '<rootDir>/tools/**/*.test.js'],
      testPathIgnorePatterns: ['/apps/e2e/', '\\.medium\\.test\\.ts$', ...ADAPTERS.map((lib) => `/libs/${lib}/`)],
    },
    {
      ...common,
      displayName: 'medium',
      testMatch: ['<rootDir>/{apps,libs}/**/*.medium.test.ts', `<rootDir>/libs/{${ADAPTERS.join(',')}}/**/*.test.ts`],
    },
    { ...common, ...setup, displayName: 'e2e', testMatch: ['<rootDir>/apps/e2e/**/*.e2e.ts'] },
    { ...common, ...setup, displayName: 'security', testMatch: ['<rootDir>/{apps,libs}/**/*.security.ts'] },
    { ...common, ...setup, displayName: 'browser', testMatch: ['<rootDir>/apps/e2e/**/*.browser.ts'] },
    // Timing comparisons (`*.timing.ts`) run here too, alone: beside other test files their latencies measure the load.
    { ...common, ...setup, displayName: 'faults', testMatch: ['<rootDir>/apps/e2e/**/*.fault.ts', '<rootDir>/apps/e2e/**/*.timing.ts'] },
  ],
};
