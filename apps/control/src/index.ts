export { controlRouter } from './control.router';
export type { ControlDeps, ControlSettings } from './control.deps';
export { consoleRouter, CONSOLE_CSP, CONSOLE_HEADERS } from './console.router';
export { consoleAssetsDir, loadConsoleAssets } from './console-assets';
export type { ConsoleAsset, ConsoleAssets } from './console-assets';
