export { createQuickJsRuntime, type QuickJsConnectorRuntime } from './quickjs-connector.runtime';
export { DiffThread } from './threads/diff-thread';
export { DEFAULT_RUN_LIMITS } from './sandbox-environment';
export type { HttpOptions, QuickJsRuntimeOptions } from './sandbox-options';
export type { ConnectorHttpRequest, ConnectorHttpResponse } from './http/connector-http';
