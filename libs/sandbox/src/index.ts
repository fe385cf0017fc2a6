export { createQuickJsRuntime } from './quickjs-connector.runtime';
export { DEFAULT_LIMITS, type QuickJsRuntimeOptions } from './sandbox-options';
