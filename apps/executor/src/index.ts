export { startExecutor } from './executor';
export type { Executor } from './executor';
export type { ExecutorDeps } from './run-invocation';
export { recoverInvocations } from './recover-invocations';
