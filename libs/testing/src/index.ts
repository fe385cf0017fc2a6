export * from './manual-clock';
export * from './fixtures';
export * from './store.contract';
