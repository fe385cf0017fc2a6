/** The wire formats shared by processes: versioned bus messages, checked whenever they are read. */
export * from './bus-message.codec';
