export * from './service-config';
export * from './secret-files';
export * from './cli-config';
export { processEnvironment } from './process-environment';
export * from './release';
