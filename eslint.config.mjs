import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Module boundaries: domain depends on nothing; adapters only on domain, contracts and the egress guard;
// services never on adapters (they are injected); only the composition root (apps/services, the service
// launchers) wires everything; the operator CLI talks HTTP and loads the launchers only to start one.
const allow = (sourceTag, ...onlyDependOnLibsWithTags) => ({ sourceTag, onlyDependOnLibsWithTags });
const boundaries = (constraints) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    // The CLI loads the sandbox lazily for `gi connector run` and the launchers for `gi up`, `gi gateway`...;
    // a service loads the MongoDB adapters only for a MongoDB store; their tests load them eagerly.
    checkDynamicDependenciesExceptions: ['@gi/sandbox', '@gi/services', '@gi/store-mongo', '@gi/files-gridfs'],
    allow: [],
    banTransitiveDependencies: false,
    depConstraints: constraints,
  },
];
/**
 * `tests`: the tests of a service, of the launchers or of a core library may also use the testing library
 * (in-memory ports, stand-ins, contract suites); `adapters`: a service's medium tests run it on the real
 * adapters (SQLite, the disk, the in-process bus), as the launchers wire it.
 */
const depConstraints = ({ tests = false, adapters = false } = {}) => [
  allow('type:domain'),
  allow('type:contracts', 'type:domain'),
  allow('type:util', 'type:domain'),
  allow('type:core', 'type:domain', 'type:contracts', 'type:core', ...(tests ? ['type:testing'] : [])),
  // Outbound HTTP to addresses tenants choose (the SSRF guard), shared by the adapters that make such calls.
  allow('type:egress', 'type:domain'),
  allow('type:adapter', 'type:domain', 'type:contracts', 'type:egress'),
  allow('type:service', 'type:domain', 'type:contracts', 'type:core', ...(tests ? ['type:testing'] : []), ...(adapters ? ['type:adapter', 'type:util'] : [])),
  allow('type:composition', 'type:domain', 'type:contracts', 'type:util', 'type:core', 'type:egress', 'type:adapter', 'type:service', ...(tests ? ['type:testing'] : [])),
  // The operator CLI: the sandbox is the one adapter it runs itself (`gi connector run`).
  allow('type:cli', 'type:domain', 'type:util', 'type:core', 'type:adapter', 'type:composition', ...(tests ? ['type:testing'] : [])),
  allow('type:testing', 'type:domain', 'type:contracts', 'type:util', 'type:core', 'type:egress', 'type:adapter', 'type:service'),
  allow('type:e2e', 'type:testing', 'type:domain', 'type:contracts', 'type:adapter'),
];

export default [
  { ignores: ['**/node_modules/**', 'dist/**', 'coverage/**', '.nx/**', 'examples/**', '.ci/**', 'reports/**', '.stryker-tmp/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: 'Read configuration through @gi/config only.' },
      ],
      '@nx/enforce-module-boundaries': boundaries(depConstraints()),
    },
  },
  {
    // The tests of a service (and the fixtures they share) run it on the in-memory ports of the testing
    // library, those of the launchers on its stand-ins too; their code never may.
    files: [
      'apps/{gateway,results,control,executor,services}/**/*.test.ts',
      'apps/{gateway,results,control,executor,services}/**/*.security.ts',
      'apps/{gateway,results,control,executor,services}/**/*.fixture.ts',
      // The CLI's tests: for the one home of conditional skips (suite-skip.ts).
      'apps/cli/**/*.test.ts',
    ],
    rules: { '@nx/enforce-module-boundaries': boundaries(depConstraints({ tests: true })) },
  },
  {
    // A service's medium tests run it on the real adapters, beside its code.
    files: ['apps/{gateway,results,control,executor,services}/**/*.medium.test.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(depConstraints({ tests: true, adapters: true })) },
  },
  {
    // The use cases are tested on the in-memory store of the testing library (which itself uses the token
    // service of libs/auth: the vault's tests stay in libs/testing, as a test there would make a cycle).
    files: ['libs/use-cases/**/*.test.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(depConstraints({ tests: true })) },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['libs/config/**/*.ts', 'apps/e2e/**/*.ts', 'libs/testing/**/*.ts', '**/*.test.ts', 'tools/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
];
