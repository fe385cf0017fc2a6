import nx from '@nx/eslint-plugin';
import tseslint from 'typescript-eslint';

// Module boundaries: domain depends on nothing; adapters only on domain, contracts and the egress guard;
// services never on adapters (they are injected); only the composition root wires everything.
const allow = (sourceTag, ...onlyDependOnLibsWithTags) => ({ sourceTag, onlyDependOnLibsWithTags });

export default [
  { ignores: ['**/node_modules/**', 'dist/**', 'coverage/**', '.nx/**', 'examples/**', '.ci/**'] },
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
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          // The CLI loads the sandbox lazily for `gi connector run`; the services load it eagerly.
          checkDynamicDependenciesExceptions: ['@gi/sandbox'],
          allow: [],
          banTransitiveDependencies: false,
          depConstraints: [
            allow('type:domain'),
            allow('type:contracts', 'type:domain'),
            allow('type:util', 'type:domain'),
            allow('type:core', 'type:domain', 'type:contracts', 'type:core'),
            // Outbound HTTP to addresses tenants choose (the SSRF guard), shared by the adapters that make such calls.
            allow('type:egress', 'type:domain'),
            allow('type:adapter', 'type:domain', 'type:contracts', 'type:egress'),
            allow('type:service', 'type:domain', 'type:contracts', 'type:core'),
            allow('type:composition', 'type:domain', 'type:contracts', 'type:util', 'type:core', 'type:egress', 'type:adapter', 'type:service'),
            allow('type:testing', 'type:domain', 'type:contracts', 'type:util', 'type:core', 'type:egress', 'type:adapter', 'type:service'),
            allow('type:e2e', 'type:testing', 'type:domain', 'type:contracts', 'type:adapter'),
          ],
        },
      ],
    },
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
