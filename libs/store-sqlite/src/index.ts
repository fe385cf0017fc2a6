export { createSqliteStore } from './sqlite-store';
