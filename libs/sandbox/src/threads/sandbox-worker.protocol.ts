import { rawBodySpan, type ByteRange, type DurableRun, type JournalEntry, type LogLine, type Progress, type RawBodySpan, type StepRecord, type WaitRecord } from '@gi/domain';
import type { webcrypto } from 'node:crypto';
import type { RunInput } from '../run/run-input';
import type { SandboxResult } from '../run/run-verdict';
import type { SandboxEnvironment } from '../sandbox-options';

/**
 * What of a run's input its worker gets with the run: the data, none of the host's functions nor the
 * pool's bookkeeping (its tenant), and the code apart (worker-code.ts). A raw body that lies in the entity's JSON as sent comes once, as its
 * span there (`rawBody` null; rawBodySpan in libs/domain).
 */
export type WorkerRunInput = Omit<RunInput, 'code' | 'tenant' | 'onProgress' | 'onLogs' | 'readFile' | 'generateKey' | 'cancel' | 'onLong' | 'onWaitsOnHost' | 'durable'> & {
  rawBodySpan: RawBodySpan | null;
  /** A durable run's journal as it starts; its writes travel to the pool's thread (`journal` messages). */
  durable: DurableRunData | null;
};

/** What of a durable run its worker gets: the data, not the writes. */
export type DurableRunData = Omit<DurableRun, 'record' | 'beginWait' | 'timeOut'>;

/** A write of a durable run's journal, made by the pool with the run's own DurableRun. */
export type JournalWrite =
  | { op: 'record'; step: StepRecord }
  | { op: 'beginWait'; wait: WaitRecord }
  | { op: 'timeOut'; step: Pick<JournalEntry, 'name' | 'occurrence'> };

/**
 * The data of a run's input, field by field: quicker than copying it with object rest, and every
 * field must be named here (a field added to RunInput fails to compile until it is).
 */
export function workerRunInput(input: RunInput): WorkerRunInput {
  const span = rawBodySpan(input.entityJson, input.rawBody);
  return {
    cacheKey: input.cacheKey,
    entityJson: input.entityJson,
    rawBody: span ? null : input.rawBody,
    rawBodySpan: span,
    inbound: input.inbound,
    secrets: input.secrets,
    timeoutMs: input.timeoutMs,
    limits: input.limits,
    allowedHosts: input.allowedHosts,
    blockedHttp: input.blockedHttp,
    trace: input.trace,
    sleeps: input.sleeps,
    events: input.events,
    durable: input.durable
      ? { botId: input.durable.botId, invocationId: input.durable.invocationId, journal: input.durable.journal, limits: input.durable.limits, suspendAfterMs: input.durable.suspendAfterMs }
      : null,
  } satisfies Record<keyof WorkerRunInput, unknown>;
}

/**
 * Messages between the pool and its worker threads: a union keyed on `kind`, plain data only. Each
 * postMessage carries an array of them (see Outbox).
 */
export type ToWorker =
  /**
   * `cancelCell`: the run's cell of the worker's cancellation flags, set when the run must stop (see CancelCells).
   * `streamsLogs`: the caller takes the lines logged while the run goes on (`logs` messages).
   * `codeId`: the pool's number of the run's code; `code`, its text, only when the thread was not sent it before.
   */
  | { kind: 'run'; id: number; input: WorkerRunInput; codeId: number; code?: string; readsFiles: boolean; streamsLogs: boolean; cancelCell?: number }
  /** The text of run `id`'s code, which its thread lacked (`code-missing`). */
  | { kind: 'code'; id: number; codeId: number; code: string }
  /** Wakes run `id` if it waits on host work; its cancel flag is already set. */
  | { kind: 'cancel'; id: number }
  /** The pool is closing: the thread lets its port go and exits once nothing is left to do (its runs were cancelled). */
  | { kind: 'stop' }
  /** The answer to a `read-file` call: the bytes, or the message the connector sees. */
  | { kind: 'file'; call: number; data?: Uint8Array; error?: string }
  /** The answer to a `journal` call: the entry as stored, or the message the write was refused with. */
  | { kind: 'journalled'; call: number; entry?: JournalEntry; error?: { name: string; message: string } }
  /** The answer to a `generate-key` call: the key or key pair (a CryptoKey crosses threads by structured clone), or Node's error. */
  | { kind: 'key'; call: number; key?: webcrypto.CryptoKey | webcrypto.CryptoKeyPair; error?: { name: string; message: string } };

export type FromWorker =
  | { kind: 'ready' }
  /** Run `id` came without the text of its code, and this thread does not have it (any more): it waits for a `code` message. */
  | { kind: 'code-missing'; id: number }
  | { kind: 'progress'; id: number; progress: Progress }
  /** A batch of the lines run `id` logged; posted before its result, so they arrive before it. */
  | { kind: 'logs'; id: number; lines: LogLine[] }
  /** `Context.ReadFile` of run `id`: the pool asks the run's reader, which lives on the main thread. */
  | { kind: 'read-file'; id: number; call: number; fileId: string; range: ByteRange }
  /** A journal write of durable run `id`: the pool makes it with the run's DurableRun, which lives on the main thread. */
  | { kind: 'journal'; id: number; call: number; write: JournalWrite }
  /** `crypto.subtle.generateKey`, its arguments checked: made on the pool's thread, which is never stopped while Node makes it (see generateKeyHere). */
  | { kind: 'generate-key'; call: number; algorithm: unknown; extractable: boolean; usages: webcrypto.KeyUsage[] }
  /** Run `id` did not end in the turn it started in: it waits on the host, and its thread is free for other runs. */
  | { kind: 'waiting'; id: number }
  /** Posted once the runs handed over with run `id` have started, or as soon as one of them goes on past LONG_RUN_MS. */
  | { kind: 'result'; id: number; result: SandboxResult };

export interface SandboxWorkerData {
  env: SandboxEnvironment;
  /** Cancellation flags shared with the pool, one cell per run the worker may hold at once. */
  cancelFlags: Int32Array;
  /** Set when the worker entry is TypeScript source, loaded through @swc/core. */
  typescript?: { swcCore: string; entry: string };
}
