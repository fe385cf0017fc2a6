export { createMongoStore, DEFAULT_MONGO_DATABASE, databaseNameOf, redactUrl } from './mongo-store';
export type { MongoStoreOptions } from './mongo-store';
