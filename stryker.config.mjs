/**
 * Mutation check of the domain, use-cases, gateway and executor packages against the small jest tier
 * (docs/testing.md). `npm run test:mutation` runs all four; `MUTATE=libs/domain npm run test:mutation` one package
 * (a full run on two cores takes long). Kept out of `npm test`.
 */
const PACKAGES = ['libs/domain', 'libs/use-cases', 'apps/gateway', 'apps/executor'];
const chosen = process.env.MUTATE ? process.env.MUTATE.split(',').map((p) => p.trim().replace(/\/$/, '')) : PACKAGES;
const unknown = chosen.filter((p) => !PACKAGES.includes(p));
if (unknown.length > 0) throw new Error(`MUTATE names no mutated package: ${unknown.join(', ')} (one of ${PACKAGES.join(', ')})`);
const slug = chosen.length === PACKAGES.length ? 'all' : chosen.map((p) => p.replace('/', '-')).join('+');

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  // findRelatedTests: each run (the first, coverage-taking one too) runs only the small tests that import the mutated files.
  jest: { projectType: 'custom', configFile: 'jest.mutation.config.js', enableFindRelatedTests: true },
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
  incrementalFile: `reports/mutation/${slug}.incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${slug}.html` },
  jsonReporter: { fileName: `reports/mutation/${slug}.json` },
  ignorePatterns: ['dist', 'data', 'coverage', 'test-artifacts', 'reports', '.nx', '.ci/node24'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
