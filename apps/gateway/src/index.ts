export { gatewayRouter } from './gateway.router';
export type { GatewayDeps, GatewaySettings } from './gateway.deps';
export { pollLocation } from './accept-invocation';
export type { UploadLimits, Uploads } from './receive-files';
