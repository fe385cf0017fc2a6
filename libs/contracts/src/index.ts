/** What processes share over the bus: its port, its versioned messages and their wire format, checked whenever read. */
export * from './bus-messages';
export * from './bus-message.codec';
export * from './job-bus';
