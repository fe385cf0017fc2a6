export { createQuickJsRuntime, type QuickJsConnectorRuntime } from './quickjs-connector.runtime';
export { DEFAULT_LIMITS, type HttpOptions, type QuickJsRuntimeOptions } from './sandbox-options';
export type { ConnectorHttpRequest, ConnectorHttpResponse } from './connector-http';
