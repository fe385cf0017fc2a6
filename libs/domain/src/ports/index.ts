/**
 * Ports: every side effect the services need, named by role, one file each. Adapters (store-sqlite,
 * files-disk, sandbox, ...) implement them; services receive them in their factories. The bus, which
 * carries messages between processes, is a port of `libs/contracts`.
 */
export * from './invocation-store';
export * from './journal-store';
export * from './catalog-store';
export * from './token-store';
export * from './secret-store';
export * from './instance-registry';
export * from './store';
export * from './file-store';
export * from './connector-runtime';
export * from './run-cancellation';
export * from './callback-sender';
export * from './clock';
