/**
 * Jest: unit tests (pure logic and in-process adapters), e2e tests (real processes over HTTP), browser
 * tests (the web console in headless Chromium), and fault tests that restart the shared RabbitMQ
 * broker: `npm test` runs those last, alone.
 */
const { pathsToModuleNameMapper } = require('./tools/jest-paths');
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] };
const common = { testEnvironment: 'node', transform, moduleNameMapper: pathsToModuleNameMapper(), rootDir: __dirname };

module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/**/*.test.ts'], testPathIgnorePatterns: ['/apps/e2e/'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/apps/e2e/**/*.e2e.ts'], setupFilesAfterEnv: ['<rootDir>/apps/e2e/src/jest.setup.ts'] },
    { ...common, displayName: 'browser', testMatch: ['<rootDir>/apps/e2e/**/*.browser.ts'], setupFilesAfterEnv: ['<rootDir>/apps/e2e/src/jest.setup.ts'] },
    { ...common, displayName: 'faults', testMatch: ['<rootDir>/apps/e2e/**/*.fault.ts'], setupFilesAfterEnv: ['<rootDir>/apps/e2e/src/jest.setup.ts'] },
  ],
};
