export { gatewayRouter } from './gateway.router';
export type { GatewayDeps, GatewaySettings } from './gateway.deps';
export { pollLocation } from './accept-invocation';
export type { UploadLimits, Uploads } from './receive-files';
export { QuotaGate, QUOTA_CACHE_MS } from './quota-gate';
export type { QuotaGateDeps, QuotaName, QuotaScope } from './quota-gate';
export { GatewayPresence, PRESENCE_INTERVAL_MS, PRESENCE_TTL_MS } from './gateway-presence';
