import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { distributedDeployment } from './distributed-env';
import { startService, type ServiceProcess } from './service-process';

/** The messages of the JSON log lines a process wrote. */
const messages = (service: ServiceProcess) =>
  service.output.flatMap((line) => {
    try {
      return [(JSON.parse(line) as { msg?: string }).msg];
    } catch {
      return [];
    }
  });

/** SIGTERM runs every shutdown step: the last line is "stopped", and the process exits 0. */
async function expectGracefulStop(service: ServiceProcess): Promise<void> {
  const code = await service.stop('SIGTERM');
  expect({ code, last: messages(service).slice(-2) }).toMatchObject({ code: 0, last: ['shutting down', 'stopped'] });
}

describe('graceful shutdown on SIGTERM', () => {
  it('the embedded service runs every step and logs "stopped"', async () => {
    const service = await startService();
    try {
      await expectGracefulStop(service);
    } finally {
      await service.dispose();
    }
  });

  describe('each distributed service', () => {
    const { dataDir, prefix, start } = distributedDeployment('shutdown');
    afterAll(async () => {
      await deleteBusTopology(prefix, ['default'], 6);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it.each(['control', 'gateway', 'results', 'executor'] as const)('%s runs every step and logs "stopped"', async (kind) => {
      const service = await start(kind);
      try {
        await expectGracefulStop(service);
      } finally {
        await service.stop();
      }
    });
  });
});
