import { CatalogCache, pairKey } from './catalog-cache';
import { openSqliteDatabase } from './sqlite-database';
import type { SqliteDatabase } from './sqlite-database';

describe('catalog cache', () => {
  let db: SqliteDatabase;
  let loads: string[];
  const load = (key: string) => () => {
    loads.push(key);
    return key.toUpperCase();
  };
  const bump = () => db.prepare("INSERT INTO tokens (bot_id, token_id, created_at) VALUES ('acme', ?, 0)").run(String(Math.random()));

  beforeEach(() => {
    db = openSqliteDatabase(':memory:');
    loads = [];
  });
  afterEach(() => db.close());

  it('reads a key once while the catalog is unchanged, and again after any write to it', () => {
    const cache = new CatalogCache<string>(db);
    expect(cache.lookup('a', load('a'))).toBe('A');
    expect(cache.lookup('a', load('a'))).toBe('A');
    expect(loads).toEqual(['a']);
    bump();
    expect(cache.lookup('a', load('a'))).toBe('A');
    expect(loads).toEqual(['a', 'a']);
  });

  it('keeps at most its capacity, the least recently used going first', () => {
    const cache = new CatalogCache<string>(db, 2);
    cache.lookup('a', load('a'));
    cache.lookup('b', load('b'));
    cache.lookup('a', load('a'));
    cache.lookup('c', load('c'));
    cache.lookup('a', load('a'));
    cache.lookup('b', load('b'));
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('names pairs of ids without ambiguity', () => {
    expect(pairKey('ab', 'c')).not.toBe(pairKey('a', 'bc'));
  });
});
