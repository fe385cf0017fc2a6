import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONNECTOR_LIMITS, systemClock } from '@gi/domain';
import { MIGRATIONS } from './schema';
import { createSqliteStore } from './sqlite-store';

describe('SQLite store opening a database written before per-integration limits', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gi-store-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates it and reads the versions deployed then with the default limits', async () => {
    const path = join(dir, 'store.db');
    const old = new Database(path);
    old.exec(MIGRATIONS.slice(0, 2).join('\n'));
    old.pragma('user_version = 2');
    old.prepare(`INSERT INTO integrations (bot_id, integration_id, version, entity_name, code, pool, timeout_seconds, allowed_hosts, deployed_at)
      VALUES ('acme', 'ack', 1, 'Order', 'return 1', 'default', 60, '[]', 1)`).run();
    old.close();

    const store = createSqliteStore(path, systemClock);
    try {
      expect((await store.catalog.getIntegration('acme', 'ack'))?.limits).toEqual(DEFAULT_CONNECTOR_LIMITS);
    } finally {
      await store.close();
    }
  });
});
