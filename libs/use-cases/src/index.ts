/** What more than one service does with an invocation: wait for it to finish, cancel it. */
export * from './await-finished';
export * from './cancel-invocation';
