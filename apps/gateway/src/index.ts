export { gatewayRouter } from './gateway.router';
export { handleWebhookCall } from './handle-webhook-call';
export type { CallHooks, WebhookAnswer, WebhookCall } from './handle-webhook-call';
export type { GatewayDeps, GatewaySettings } from './gateway.deps';
export type { UploadLimits, Uploads } from './receive-files';
export { QuotaGate, QUOTA_CACHE_MS } from './quota-gate';
export type { QuotaGateDeps, QuotaName, QuotaScope } from './quota-gate';
export { GatewayPresence, PRESENCE_INTERVAL_MS, PRESENCE_TTL_MS } from './gateway-presence';
export { UnpublishedJobs } from './unpublished-jobs';
