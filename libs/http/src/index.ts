export * from './problem-details';
export * from './read-body';
export * from './logger';
export * from './metrics';
export * from './operations.router';
export * from './http-app';
