import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FakeMongod } from '@gi/testing';
import { startService } from './service-process';

/**
 * How a built service composes itself on a MongoDB STORE_URL, shown against a stand-in server that
 * records commands (no MongoDB runs here; distributed-mongo.e2e.ts runs the real thing where one does).
 */
describe('a service on a MongoDB STORE_URL (stand-in server)', () => {
  it('keeps uploaded files in GridFS beside the store: the bucket indexes are created at start, nothing on disk', async () => {
    const fake = await FakeMongod.start({ replicaSet: true });
    const control = await startService({ command: 'control', env: { STORE_URL: fake.url } });
    try {
      const created = fake.named('createIndexes').map((command) => command.createIndexes);
      expect(created).toEqual(['invocations', 'entities', 'integrations', 'tokens', 'idempotencyKeys', 'files.files', 'files.chunks']);
      expect(fake.named('createIndexes').every((command) => command.$db === 'gi-fake')).toBe(true);
      expect((await fetch(`${control.baseUrl}/readyz`)).status).toBe(200);
      expect(existsSync(join(control.dataDir, 'files'))).toBe(false);
    } finally {
      await control.dispose();
      await fake.stop();
    }
  });
});
