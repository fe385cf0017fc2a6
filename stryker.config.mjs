import { createHash } from 'node:crypto';

/**
 * Mutation check of the domain, use-cases, gateway and executor packages against the small jest tier
 * (docs/testing.md). `npm run test:mutation` runs all four; `MUTATE=libs/domain` one package, and
 * `MUTATE=libs/domain/src/quotas.ts,libs/domain/src/lru-map.ts` some of its files (a full run on two shared cores
 * takes hours). Kept out of `npm test`.
 *
 * Each package's mutants face the small tests written for it: its own, and those elsewhere that test it. Not the whole
 * small tier: loading a hundred test files per mutant is slow, and a mutant that only an unrelated test happens to
 * kill is not one the package's tests guard against. `MUTATION_TESTS=all` runs every small test instead.
 */
const TESTS = {
  'libs/domain': ['libs/domain/src/**/*.test.ts'],
  'libs/use-cases': ['libs/use-cases/src/**/*.test.ts', 'apps/executor/src/connector-files.test.ts'],
  'apps/gateway': ['apps/gateway/src/**/*.test.ts'],
  'apps/executor': ['apps/executor/src/**/*.test.ts'],
};
const PACKAGES = Object.keys(TESTS);
const chosen = process.env.MUTATE ? process.env.MUTATE.split(',').map((p) => p.trim().replace(/\/$/, '')) : PACKAGES;
const packageOf = (target) => PACKAGES.find((p) => target === p || target.startsWith(`${p}/src/`));
const unknown = chosen.filter((target) => !packageOf(target));
if (unknown.length > 0) throw new Error(`MUTATE names nothing mutated: ${unknown.join(', ')} (packages ${PACKAGES.join(', ')}, or files in them)`);
const packages = [...new Set(chosen.map(packageOf))];
const testMatch = process.env.MUTATION_TESTS === 'all' ? undefined : packages.flatMap((p) => TESTS[p]).map((glob) => `<rootDir>/${glob}`);
const named = process.env.MUTATE ? chosen.map((target) => target.replace(/\.ts$/, '').replace(/\//g, '-')).join('+') : 'all';
// A report's name, short enough for the file system (255 bytes) however many files MUTATE names; the same MUTATE, the same name.
const slug = named.length <= 120 ? named : `${named.slice(0, 80)}+${createHash('sha256').update(named).digest('hex').slice(0, 12)}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  // Per-test coverage picks each mutant's tests by name, but jest still loads every test file to find them; findRelatedTests
  // loads only the files that import the mutated one: 0.4 s a mutant instead of 2.3 s for render.ts, same score.
  jest: { projectType: 'custom', configFile: 'jest.mutation.config.js', enableFindRelatedTests: true, config: testMatch ? { testMatch } : {} },
  mutate: [
    ...chosen.map((target) => (PACKAGES.includes(target) ? `${target}/src/**/*.ts` : target)),
    '!**/*.test.ts',
    '!**/*.security.ts',
    '!**/*.e2e.ts',
  ],
  coverageAnalysis: 'perTest',
  // A shared machine of two cores: one runner leaves a core to everyone else.
  concurrency: Number(process.env.MUTATION_CONCURRENCY ?? 1),
  // Jest run again and again in one process keeps memory: a runner grew to 3.8 GB in 5 minutes of gateway mutants, 11 s each.
  maxTestRunnerReuse: 25,
  // Beyond a test's own time in the first run: a mutant that loops or never settles costs this much, and there are many
  // (15 of the gateway's first 122 at 20 s took two thirds of the time). The tests take milliseconds, so 5 s is still
  // a hundred times their time on a loaded machine.
  timeoutMS: 5_000,
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
