import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');
const ESLINT = join(ROOT, 'node_modules/.bin/eslint');

/** Lints `code` as if it were the content of `file`, returning the module-boundary messages. */
function boundaryErrors(file: string, code: string): string[] {
  const run = spawnSync(ESLINT, ['--format', 'json', '--stdin', '--stdin-filename', file], { cwd: ROOT, input: code, encoding: 'utf8' });
  const [result] = JSON.parse(run.stdout) as Array<{ messages: Array<{ ruleId: string; message: string }> }>;
  return result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message);
}

describe('module boundaries (lint)', () => {
  beforeAll(() => {
    // The rule reads the project graph that `nx show projects` computes (npm run lint does the same).
    spawnSync(join(ROOT, 'node_modules/.bin/nx'), ['show', 'projects'], { cwd: ROOT, env: { ...process.env, NX_DAEMON: 'false' } });
  }, 60_000);

  it.each([
    ['the domain importing an adapter', 'libs/domain/src/errors.ts', "import { createSqliteStore } from '@gi/store-sqlite';\nexport const x = createSqliteStore;\n"],
    ['an adapter importing a service', 'libs/store-sqlite/src/schema.ts', "import { gatewayRouter } from '@gi/gateway';\nexport const x = gatewayRouter;\n"],
    ['a service importing an adapter', 'apps/gateway/src/accept-call.ts', "import { LocalJobBus } from '@gi/bus-local';\nexport const x = LocalJobBus;\n"],
    ['the domain importing the bus messages', 'libs/domain/src/errors.ts', "import { jobMessage } from '@gi/contracts';\nexport const x = jobMessage;\n"],
    ['the operator CLI importing a service', 'apps/cli/src/run-cli.ts', "import { gatewayRouter } from '@gi/gateway';\nexport const x = gatewayRouter;\n"],
    ['a service importing the launchers', 'apps/gateway/src/accept-call.ts', "import { runGateway } from '@gi/services';\nexport const x = runGateway;\n"],
  ])('refuses %s', (_name, file, code) => {
    expect(boundaryErrors(file, code)).not.toEqual([]);
  }, 30_000);

  it('allows the composition root to wire adapters and services', () => {
    const code = "import { gatewayRouter } from '@gi/gateway';\nimport { LocalJobBus } from '@gi/bus-local';\nexport const x = [gatewayRouter, LocalJobBus];\n";
    expect(boundaryErrors('apps/services/src/up.ts', code)).toEqual([]);
  }, 30_000);
});
