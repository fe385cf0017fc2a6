import { systemClock } from '@gi/domain';
import type { Clock, Store } from '@gi/domain';
import { GroupCommit } from './group-commit';
import { SqliteCatalogStore } from './sqlite-catalog.store';
import { openSqliteDatabase, type SqliteSynchronous } from './sqlite-database';
import { SqliteInstanceRegistry } from './sqlite-instance.registry';
import { SqliteInvocationStore } from './sqlite-invocation.store';
import { SqliteJournalStore } from './sqlite-journal.store';
import { SqliteSecretStore } from './sqlite-secret.store';
import { SqliteTokenStore } from './sqlite-token.store';
import { DEFAULT_WAL_CHECKPOINTS, WalCheckpointer } from './wal-checkpointer';
import type { WalCheckpointOptions } from './wal-checkpointer';

export interface SqliteStoreOptions {
  /** When the WAL is checkpointed (off the serving thread); the defaults suit production. */
  walCheckpoints?: WalCheckpointOptions;
  /**
   * Whether this process claims the invocations it creates (the embedded deployment, the default):
   * it then keeps them a while, so a claim need not read them back. A gateway alone never claims.
   */
  claimsWhatItCreates?: boolean;
  /** When a commit is on disk (SQLITE_SYNCHRONOUS); normal unless given. */
  synchronous?: SqliteSynchronous;
}

/** The embedded store: one SQLite file (or ':memory:') holding invocations, the journals of durable runs, the catalog, the token registry and live instances. */
export function createSqliteStore(path: string, clock: Clock = systemClock, options: SqliteStoreOptions = {}): Store {
  const db = openSqliteDatabase(path, options.synchronous);
  const writes = new GroupCommit(db);
  const checkpointer = path === ':memory:' ? null : WalCheckpointer.start(db, writes, path, options.walCheckpoints ?? DEFAULT_WAL_CHECKPOINTS);
  let closed: Promise<void> | undefined;
  return {
    invocations: new SqliteInvocationStore(db, clock, writes, options.claimsWhatItCreates ?? true),
    journal: new SqliteJournalStore(db, writes),
    catalog: new SqliteCatalogStore(db),
    tokens: new SqliteTokenStore(db),
    secrets: new SqliteSecretStore(db),
    instances: new SqliteInstanceRegistry(db),
    async ping() {
      return db.prepare('SELECT 1 AS ok').get() !== undefined;
    },
    close() {
      closed ??= (async () => {
        writes.flush();
        db.close();
        // The checkpointer's connection closes last when no other process has the file open: it
        // then copies what is left of the WAL and removes it, off the serving thread.
        await checkpointer?.stop();
      })();
      return closed;
    },
  };
}
