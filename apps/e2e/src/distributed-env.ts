import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_AMQP_URL } from '@gi/testing';
import { ADMIN_TOKEN, startService } from './service-process';
import type { StartOptions } from './service-process';

/**
 * One distributed deployment under test: its own data directory (a shared SQLite file), bus prefix and
 * secrets, with short leases and sweeps so recovery shows within seconds. Given a MongoDB `storeUrl`,
 * the processes share nothing on disk: each gets a data directory of its own, as on separate hosts.
 */
export function distributedDeployment(name: string, options: { storeUrl?: string } = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), `gi-${name}-`));
  const prefix = `gi-${name}-${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = {
    ADMIN_TOKEN,
    TOKEN_SECRET: randomBytes(32).toString('hex'),
    AMQP_URL: TEST_AMQP_URL,
    BUS_PREFIX: prefix,
    LEASE_SECONDS: '5',
    SWEEP_INTERVAL_SECONDS: '1',
    REPUBLISH_AFTER_SECONDS: '5',
    EXECUTOR_CONCURRENCY: '4',
    // Tests tell where each invocation ran from the executors' 'invocation finished' lines (debug for successes).
    LOG_LEVEL: 'debug',
    ...(options.storeUrl ? { STORE_URL: options.storeUrl } : {}),
  };
  const start = (
    command: 'gateway' | 'results' | 'control' | 'executor',
    args: string[] = [],
    extraEnv: Record<string, string> = {},
    where: Pick<StartOptions, 'wrap' | 'host'> = {},
  ) => startService({ command, args, env: { ...env, ...extraEnv }, dataDir: options.storeUrl ? mkdtempSync(join(dataDir, `${command}-`)) : dataDir, ...where });
  return { dataDir, prefix, env, start };
}
