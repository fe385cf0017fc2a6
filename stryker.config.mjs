import { createHash } from 'node:crypto';

/**
 * Mutation check of the domain, use-cases, gateway and executor packages against the small jest tier
 * (docs/testing.md). `npm run test:mutation` runs all four; `MUTATE=libs/domain` one package, and
 * `MUTATE=libs/domain/src/quotas.ts,libs/domain/src/lru-map.ts` some of its files (a full run on two shared cores
 * takes hours). Kept out of `npm test`.
 *
 * Each package's mutants face the small tests written for it: its own, and those elsewhere that test it. Not the whole
 * small tier: loading a hundred test files per mutant is slow, and a mutant that only an unrelated test happens to
 * kill is not one the package's tests guard against. `MUTATION_TESTS=all` runs every small test instead;
 * `MUTATION_TESTS=medium` adds the package's medium tests of `MEDIUM_TESTS`.
 */
const TESTS = {
  'libs/domain': ['libs/domain/src/**/*.test.ts'],
  'libs/use-cases': ['libs/use-cases/src/**/*.test.ts', 'apps/executor/src/connector-files.test.ts'],
  'apps/gateway': ['apps/gateway/src/**/*.test.ts'],
  'apps/executor': ['apps/executor/src/**/*.test.ts'],
};
/**
 * The medium tests `MUTATION_TESTS=medium` adds: those that need only SQLite (in memory), a temporary directory and
 * the in-process bus, checked file by file. Never one that needs RabbitMQ or MongoDB: a mutant runs its tests again
 * and again, and the broker is shared (`sweep-files.gridfs.medium.test.ts` needs MongoDB and is left out).
 */
const MEDIUM_TESTS = {
  'apps/executor': [
    'apps/executor/src/run-invocation.medium.test.ts',
    'apps/executor/src/run-durable.medium.test.ts',
    'apps/executor/src/deliver-callbacks.medium.test.ts',
    'apps/executor/src/sweep-files.medium.test.ts',
  ],
};
const PACKAGES = Object.keys(TESTS);
const TEST_CHOICES = [undefined, 'all', 'medium'];
if (!TEST_CHOICES.includes(process.env.MUTATION_TESTS)) throw new Error(`MUTATION_TESTS is all or medium, or unset (not ${process.env.MUTATION_TESTS})`);
const chosen = process.env.MUTATE ? process.env.MUTATE.split(',').map((p) => p.trim().replace(/\/$/, '')) : PACKAGES;
const packageOf = (target) => PACKAGES.find((p) => target === p || target.startsWith(`${p}/src/`));
const unknown = chosen.filter((target) => !packageOf(target));
if (unknown.length > 0) throw new Error(`MUTATE names nothing mutated: ${unknown.join(', ')} (packages ${PACKAGES.join(', ')}, or files in them)`);
const packages = [...new Set(chosen.map(packageOf))];
const medium = process.env.MUTATION_TESTS === 'medium';
// The medium tests named, and no other: jest keeps a file the last glob it matches keeps, so a negation between the
// small globs (which match `*.medium.test.ts` too) and the files named leaves out the rest.
const globs = [...packages.flatMap((p) => TESTS[p]), ...(medium ? ['!**/*.medium.test.ts', ...packages.flatMap((p) => MEDIUM_TESTS[p] ?? [])] : [])];
const testMatch = process.env.MUTATION_TESTS === 'all' ? undefined : globs.map((glob) => (glob.startsWith('!') ? glob : `<rootDir>/${glob}`));
// Results kept apart for each choice of tests: the same mutants face other tests.
const suffix = { all: '.all-tests', medium: '.medium' }[process.env.MUTATION_TESTS] ?? '';
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
  incrementalFile: `reports/mutation/${slug}${suffix}.incremental.json`,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `reports/mutation/${slug}${suffix}.html` },
  jsonReporter: { fileName: `reports/mutation/${slug}${suffix}.json` },
  // Static mutants (module-level constants) need a fresh module registry and every test: slow, and ignored.
  ignoreStatic: true,
  ignorePatterns: ['dist', 'data', 'coverage', 'test-artifacts', 'reports', '.nx', '.ci/node24'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
