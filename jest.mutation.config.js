/**
 * The small jest tier alone, as one top-level config: what the mutation check (stryker.config.mjs) runs against
 * each mutant. Stryker's per-test coverage wraps the top-level test environment, which a multi-project config hides.
 * With MUTATION_TESTS=medium, the `*.medium.test.ts` files stryker.config.mjs names may run too (with the medium
 * tier's time limit); the adapters' own tests stay out.
 */
const fs = require('node:fs');
const path = require('node:path');
const { projects, testTimeout } = require('./jest.config');

const small = projects.find((project) => project.displayName === 'small');

/**
 * Stryker runs the tests in a copy of the repository under .stryker-tmp, with no node_modules of its own: Node finds
 * the packages by walking up, but a mapping to `<rootDir>/node_modules/...` must name the directory that holds them.
 */
const IN_NODE_MODULES = '<rootDir>/node_modules/';
const installed = (packagePath) =>
  require.resolve
    .paths(packagePath)
    .map((dir) => path.join(dir, packagePath))
    .find((file) => fs.existsSync(file));
const moduleNameMapper = Object.fromEntries(
  Object.entries(small.moduleNameMapper).map(([pattern, target]) => [
    pattern,
    target.startsWith(IN_NODE_MODULES) ? installed(target.slice(IN_NODE_MODULES.length)) : target,
  ]),
);

const MEDIUM_FILES = '\\.medium\\.test\\.ts$';
const medium = process.env.MUTATION_TESTS === 'medium';
const testPathIgnorePatterns = medium ? small.testPathIgnorePatterns.filter((pattern) => pattern !== MEDIUM_FILES) : small.testPathIgnorePatterns;
if (medium && testPathIgnorePatterns.length === small.testPathIgnorePatterns.length) throw new Error(`the small tier no longer ignores ${MEDIUM_FILES}: update jest.mutation.config.js`);

module.exports = { ...small, moduleNameMapper, testPathIgnorePatterns, ...(medium && { testTimeout }) };
