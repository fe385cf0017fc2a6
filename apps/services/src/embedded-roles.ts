/**
 * What the primary of an embedded deployment and the processes it forks tell each other: a process's
 * place (in its environment), and the notices they exchange over the IPC channel.
 */

/** Which part of the embedded deployment this process plays. */
export type EmbeddedRole =
  /** The only process (`--processes 1`): today's deployment, no cluster. */
  | { kind: 'sole' }
  /**
   * One of several processes sharing the port and the store; the first recovers what a previous run left.
   * The primary listens on `port` and hands each connection to a process (connection-handoff.ts).
   */
  | { kind: 'worker'; index: number; recoverAtStart: boolean; port: number };

/** Tells a forked process its place: its index, and whether it recovers what a previous run left. */
export const PROCESS_INDEX_ENV = 'GI_EMBEDDED_PROCESS';
export const RECOVER_ENV = 'GI_EMBEDDED_RECOVER';
/** The port the primary listens on (and hands connections from). */
export const PORT_ENV = 'GI_EMBEDDED_PORT';

/** What a process of the cluster sends once it listens: the primary logs one `listening` for all. */
export interface ListeningNotice {
  kind: 'gi:listening';
  port: number;
  fields: Record<string, unknown>;
}

export function listeningNotice(port: number, fields: Record<string, unknown>): ListeningNotice {
  return { kind: 'gi:listening', port, fields };
}

/** What the primary sends a live process when another ended: take over the jobs that one was running. */
export interface TakeOverNotice {
  kind: 'gi:take-over';
  owner: string;
}

export const isTakeOverNotice = (message: unknown): message is TakeOverNotice =>
  typeof message === 'object' && message !== null && (message as TakeOverNotice).kind === 'gi:take-over' && typeof (message as TakeOverNotice).owner === 'string';

export const isListeningNotice = (message: unknown): message is ListeningNotice => typeof message === 'object' && message !== null && (message as ListeningNotice).kind === 'gi:listening';

/** The role of a process the primary forked, from the environment it was given. */
export function embeddedWorkerRole(env: NodeJS.ProcessEnv): EmbeddedRole {
  return { kind: 'worker', index: Number(env[PROCESS_INDEX_ENV] ?? 0), recoverAtStart: env[RECOVER_ENV] === '1', port: Number(env[PORT_ENV] ?? 0) };
}
