import type { ConnectorRunResult, Progress } from '@gi/domain';
import type { RunInput } from './run-connector';
import type { SandboxEnvironment } from './sandbox-options';

/** Messages between the pool and its worker threads: a union keyed on `kind`, plain data only. */
export type ToWorker = { kind: 'run'; id: number; input: Omit<RunInput, 'onProgress'> };

export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'progress'; id: number; progress: Progress }
  | { kind: 'result'; id: number; result: ConnectorRunResult };

export interface SandboxWorkerData {
  env: SandboxEnvironment;
  /** Set when the worker entry is TypeScript source, loaded through @swc/core. */
  typescript?: { swcCore: string; entry: string };
}
