/** What more than one service does with an invocation or the catalog: wait for it to finish, cancel it, delete from the catalog, replay requests against a draft. */
export * from './await-finished';
export * from './cancel-invocation';
export * from './connector-files';
export * from './delete-from-catalog';
export * from './replay-draft';
