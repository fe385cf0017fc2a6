import { mongoUrlOf, parseServiceConfig, sqlitePathOf } from './service-config';

describe('STORE_URL', () => {
  it('names a SQLite file by path or sqlite:// URL, DATA_DIR/store.db by default', () => {
    expect(sqlitePathOf(parseServiceConfig({ DATA_DIR: '/srv/gi/' }))).toBe('/srv/gi/store.db');
    expect(sqlitePathOf(parseServiceConfig({ STORE_URL: 'sqlite:///srv/gi/store.db' }))).toBe('/srv/gi/store.db');
    expect(mongoUrlOf(parseServiceConfig({ STORE_URL: './data/shared.db' }))).toBeNull();
  });

  it('names a MongoDB replica set by mongodb:// or mongodb+srv:// URL', () => {
    const url = 'mongodb://gi:secret@mongo-0,mongo-1/generic-integration?replicaSet=rs0';
    expect(mongoUrlOf(parseServiceConfig({ STORE_URL: url }))).toBe(url);
    expect(mongoUrlOf(parseServiceConfig({ STORE_URL: 'mongodb+srv://cluster.example.com/gi' }))).toBe('mongodb+srv://cluster.example.com/gi');
  });

  it('refuses other URLs with a message naming both kinds', () => {
    expect(() => parseServiceConfig({ STORE_URL: 'postgres://db/gi' })).toThrow(/STORE_URL: a SQLite file .* or a MongoDB URL/);
  });
});
