/**
 * Mutation check of the domain, use-cases, gateway and executor packages against the small jest tier
 * (docs/testing.md). `npm run test:mutation` runs all four; `MUTATE=libs/domain npm run test:mutation` one package
 * (a full run on two cores takes long). Kept out of `npm test`.
 */
/**
 * Each package and the small tests that run against its mutants: its own, and those elsewhere written for it.
 * Not the whole small tier: loading a hundred test files per mutant takes hours on two shared cores, and a mutant
 * only an unrelated test happens to kill is not one the package's tests guard against. `MUTATION_TESTS=all` runs
 * every small test instead.
 */
const TESTS = {
  'libs/domain': ['libs/domain/src/**/*.test.ts'],
  'libs/use-cases': ['libs/use-cases/src/**/*.test.ts', 'libs/testing/src/{delete-from-catalog,replay-draft}.test.ts', 'apps/executor/src/connector-files.test.ts'],
  'apps/gateway': ['apps/gateway/src/**/*.test.ts'],
  'apps/executor': ['apps/executor/src/**/*.test.ts'],
};
const PACKAGES = Object.keys(TESTS);
const chosen = process.env.MUTATE ? process.env.MUTATE.split(',').map((p) => p.trim().replace(/\/$/, '')) : PACKAGES;
const unknown = chosen.filter((p) => !PACKAGES.includes(p));
if (unknown.length > 0) throw new Error(`MUTATE names no mutated package: ${unknown.join(', ')} (one of ${PACKAGES.join(', ')})`);
const testMatch = process.env.MUTATION_TESTS === 'all' ? undefined : chosen.flatMap((p) => TESTS[p]).map((glob) => `<rootDir>/${glob}`);
const slug = chosen.length === PACKAGES.length ? 'all' : chosen.map((p) => p.replace('/', '-')).join('+');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  // findRelatedTests: each run (the first, coverage-taking one too) runs only the small tests that import the mutated files.
  jest: { projectType: 'custom', configFile: 'jest.mutation.config.js', enableFindRelatedTests: true, config: testMatch ? { testMatch } : {} },
  mutate: [
    ...chosen.map((p) => `${p}/src/**/*.ts`),
    '!**/*.test.ts',
    '!**/*.security.ts',
    '!**/*.e2e.ts',
  ],
  coverageAnalysis: 'perTest',
  // A shared machine of two cores: one runner leaves a core to everyone else; a loaded machine needs long timeouts.
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  timeoutMS: 20_000,
  dryRunTimeoutMinutes: 30,
  incremental: true,
  incrementalFile: `reports/mutation/${slug}${testMatch ? '' : '.all-tests'}.incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${slug}.html` },
  jsonReporter: { fileName: `reports/mutation/${slug}.json` },
  // Static mutants (module-level constants) need a fresh module registry and every test: slow, and ignored.
  ignoreStatic: true,
  ignorePatterns: ['dist', 'data', 'coverage', 'test-artifacts', 'reports', '.nx', '.ci/node24'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
