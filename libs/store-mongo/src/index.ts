export { createMongoStore, DEFAULT_MONGO_DATABASE, databaseNameOf, redactUrl } from './mongo-store';
export type { MongoStore, MongoStoreOptions } from './mongo-store';
