export * from './manual-clock';
export * from './fixtures';
export * from './store.contract';
export * from './file-store.contract';
export * from './bus.contract';
export * from './amqp-broker';
export * from './mongo-test-server';
export * from './fake-mongod.fixture';
