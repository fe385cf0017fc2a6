import { parseArgs } from 'node:util';
import { parseServiceConfig, processEnvironment } from '@gi/config';

import type { ServiceName } from './service-names';

/**
 * Starts one service in this process: `up` is the whole embedded deployment, the others run distributed.
 * A start that fails halfway (the broker cannot be reached after the store was opened, say) may leave
 * what it opened holding the process: it then ends shortly after the error is reported.
 */
export async function runService(name: ServiceName, argv: string[]): Promise<void> {
  try {
    await startService(name, argv);
  } catch (error) {
    setTimeout(() => process.exit(1), 500).unref();
    throw error;
  }
}

async function startService(name: ServiceName, argv: string[]): Promise<void> {
  switch (name) {
    case 'up':
      return (await import('./embedded.service')).runEmbedded();
    case 'gateway':
      return (await import('./gateway.service')).runGateway();
    case 'results':
      return (await import('./results.service')).runResults();
    case 'control':
      return (await import('./control.service')).runControl();
    case 'executor': {
      const { values } = parseArgs({ args: argv, options: { pools: { type: 'string' } }, strict: true });
      const pools = (values.pools ?? parseServiceConfig(processEnvironment()).EXECUTOR_POOLS).split(',').filter(Boolean);
      return (await import('./executor.service')).runExecutor(pools);
    }
  }
}
