import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { deleteBusTopology, FakeMongod, TEST_AMQP_URL } from '@gi/testing';
import { startService } from './service-process';

/**
 * How a built service composes itself on a MongoDB STORE_URL, shown against a stand-in server that
 * records commands (no MongoDB runs here; distributed-mongo.e2e.ts runs the real thing where one does).
 */
describe('a service on a MongoDB STORE_URL (stand-in server)', () => {
  it('keeps uploaded files in GridFS beside the store: the bucket indexes are created at start, nothing on disk', async () => {
    const fake = await FakeMongod.start({ replicaSet: true });
    // The control service announces cancellations on the bus.
    const prefix = `gi-mongo-wiring-${randomBytes(4).toString('hex')}`;
    const control = await startService({ command: 'control', env: { STORE_URL: fake.url, AMQP_URL: TEST_AMQP_URL, BUS_PREFIX: prefix } });
    try {
      const created = fake.named('createIndexes').map((command) => command.createIndexes);
      expect(created).toEqual([
        'invocations',
        'invocationLogs',
        'invocationJournal',
        'invocationEvents',
        'entities',
        'integrations',
        'tokens',
        'idempotencyKeys',
        'quotas',
        'signingSecrets',
        'secrets',
        'deletedIntegrations',
        'integrationDrafts',
        'instances',
        'files.files',
        'files.chunks',
      ]);
      expect(fake.named('createIndexes').every((command) => command.$db === 'gi-fake')).toBe(true);
      expect((await fetch(`${control.baseUrl}/readyz`)).status).toBe(200);
      expect(existsSync(join(control.dataDir, 'files'))).toBe(false);
    } finally {
      await control.dispose();
      await fake.stop();
      await deleteBusTopology(prefix, [], 6);
    }
  });
});
