export * from './manual-clock';
export * from './fixtures';
export * from './store.contract';
export * from './file-store.contract';
export * from './bus.contract';
export * from './amqp-broker';
export * from './mongo-test-server';
export * from './suite-skip';
export * from './fake-mongod.fixture';
export * from './fake-store';
export * from './small-services';
export * from './example-apis';
export type { Producer, ProducerCall } from './inbound-signers';

/**
 * The producers of every inbound scheme, signing with the providers' own libraries (inbound-signers.ts),
 * loaded on first use: those libraries take a second to load, which no other test should pay.
 */
export const inboundProducers = async (secretName: string) => (await import('./inbound-signers')).producers(secretName);
