import { parseArgs } from 'node:util';
import { parseServiceConfig, processEnvironment } from '@gi/config';

import type { ServiceName } from './service-names';

/** Starts one service in this process: `up` is the whole embedded deployment, the others run distributed. */
export async function runService(name: ServiceName, argv: string[]): Promise<void> {
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
