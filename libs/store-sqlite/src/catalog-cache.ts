import { LruMap } from '@gi/domain';
import type { SqliteDatabase } from './sqlite-database';

/** Lookups kept per cache: far more than the tokens and integrations of any busy minute. */
export const CATALOG_CACHE_SIZE = 4096;

/**
 * A per-process cache of catalog lookups (token records, integration targets), valid while the
 * catalog generation is unchanged. The generation is one counter row that triggers bump on every
 * insert, update and delete of the tables the cached lookups read, whoever writes them: this process,
 * another process on the same file, or a hand-run statement. Every lookup reads the generation first
 * (one integer from one row), so a revocation, a deploy or a deletion committed before a lookup starts
 * is seen by that lookup. A row read just after the generation is at least as new as it, so keeping
 * it under that generation is safe: a later write moves the generation on and empties the cache.
 */
export class CatalogCache<V> {
  private readonly entries: LruMap<string, V>;
  private generation = -1;
  private readonly readGeneration: () => number;

  constructor(db: SqliteDatabase, capacity = CATALOG_CACHE_SIZE) {
    this.entries = new LruMap(capacity);
    const statement = db.prepare('SELECT value FROM catalog_generation WHERE id = 1').pluck();
    this.readGeneration = () => statement.get() as number;
  }

  /** The value under `key`, read through `load` when the catalog changed since it was kept (or never was). */
  lookup(key: string, load: () => V): V {
    const generation = this.readGeneration();
    if (generation !== this.generation) {
      this.entries.clear();
      this.generation = generation;
    } else {
      const kept = this.entries.get(key);
      if (kept !== undefined) return kept;
    }
    const value = load();
    this.entries.set(key, value);
    return value;
  }
}

/** A key naming a pair of ids without ambiguity, whatever characters they hold. */
export const pairKey = (first: string, second: string): string => `${first.length}:${first}${second}`;
