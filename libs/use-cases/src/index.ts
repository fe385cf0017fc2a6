/**
 * What more than one service does with an invocation or the catalog: route its completion to whoever waits
 * (wait for it to finish, announce it, relay it), cancel it, delete from the catalog, replay requests against a draft.
 */
export * from './completion-routing/completion-routing';
export * from './cancel-invocation';
export * from './connector-files';
export * from './delete-from-catalog';
export * from './replay-draft';
