export { createSqliteStore } from './sqlite-store';
export type { SqliteStoreOptions } from './sqlite-store';
