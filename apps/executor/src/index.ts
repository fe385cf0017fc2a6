export { startExecutor } from './executor';
export { runInvocation } from './run-invocation';
export type { Executor } from './executor';
export type { ExecutorDeps } from './run-invocation';
export { recoverInvocations } from './recover-invocations';
export { sweepFiles } from './sweep-files';
export type { FileSweepResult } from './sweep-files';
