export * from './service-config';
export * from './connection-limits';
export * from './secret-files';
export * from './cli-config';
export { processEnvironment } from './process-environment';
export * from './release';
