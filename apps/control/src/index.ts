export { controlRouter } from './control.router';
export type { ControlDeps, ControlSettings } from './control.deps';
