import { systemClock } from '@gi/domain';
import type { Clock, Store } from '@gi/domain';
import { GroupCommit } from './group-commit';
import { SqliteCatalogStore } from './sqlite-catalog.store';
import { openSqliteDatabase } from './sqlite-database';
import { SqliteInstanceRegistry } from './sqlite-instance.registry';
import { SqliteInvocationStore } from './sqlite-invocation.store';
import { SqliteTokenStore } from './sqlite-token.store';

/** The embedded store: one SQLite file (or ':memory:') holding invocations, the catalog, the token registry and live instances. */
export function createSqliteStore(path: string, clock: Clock = systemClock): Store {
  const db = openSqliteDatabase(path);
  const writes = new GroupCommit(db);
  return {
    invocations: new SqliteInvocationStore(db, clock, writes),
    catalog: new SqliteCatalogStore(db),
    tokens: new SqliteTokenStore(db),
    instances: new SqliteInstanceRegistry(db),
    async ping() {
      return db.prepare('SELECT 1 AS ok').get() !== undefined;
    },
    async close() {
      if (!db.open) return;
      writes.flush();
      db.close();
    },
  };
}
