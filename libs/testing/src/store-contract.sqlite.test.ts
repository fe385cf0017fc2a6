import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '@gi/store-sqlite';
import { ManualClock } from './manual-clock';
import { describeStoreContract } from './store.contract';

describeStoreContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gi-store-'));
  const clock = new ManualClock();
  const store = createSqliteStore(join(dir, 'store.db'), clock);
  return {
    store,
    clock,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
