/**
 * Entry of a sandbox worker thread: runs connectors off the main event loop, so a busy connector
 * cannot stall the process (HTTP servers, lease heartbeats). Several runs may share a worker while
 * they wait on host calls; the pool hands it another only while none of its runs computes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SandboxEngine } from '../engine/sandbox-engine';
import { rawBodyOf, SlotMap, type DurableRun, type LogLine, type Progress } from '@gi/domain';
import { SharedCancellation } from './run-cancellation';
import type { RunInput } from '../run/run-input';
import type { FromWorker, JournalWrite, SandboxWorkerData, ToWorker } from './sandbox-worker.protocol';
import { ThreadCodes } from './worker-code';

interface PendingCall {
  resolve: (answer: unknown) => void;
  reject: (error: Error) => void;
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('The sandbox worker must run in a worker thread.');
  const { env, cancelFlags } = workerData as SandboxWorkerData;
  const engine = await SandboxEngine.create(env);
  // Progress, log batches and file reads leave at once: the run that sends them may keep this thread busy until it ends.
  const send = (message: FromWorker) => {
    try {
      port.postMessage([message]);
    } catch {
      // Plain data of the sandbox's own making; a message that cannot be posted is lost, never the thread.
    }
  };
  // Results of the runs of one message leave together once the message's runs have started, unless
  // a run after them goes on longer than LONG_RUN_MS: they leave then. So a result waits for no long
  // run, and quick runs handed over together cost one message back. One that cannot be posted is
  // replaced by a failure the pool can read: its run still ends.
  let held: FromWorker[] = [];
  const postHeld = () => {
    if (held.length === 0) return;
    const messages = held;
    held = [];
    try {
      port.postMessage(messages);
    } catch {
      for (const message of messages) {
        try {
          port.postMessage([message]);
        } catch (error) {
          if (message.kind !== 'result') continue;
          const text = `The run's result could not be sent back from its sandbox thread: ${(error as Error)?.message ?? 'unknown error'}`;
          send({ kind: 'result', id: message.id, result: { kind: 'failed', reason: 'threw', message: text, logs: [{ at: Date.now(), level: 'error', message: text }], durationMs: message.result.durationMs } });
        }
      }
    }
  };
  // Calls to the pool's thread (file reads, keys made there), by number until answered.
  const calls = new SlotMap<number, PendingCall>();
  let nextCall = 1;
  const callPool = <T>(message: (call: number) => FromWorker): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const call = nextCall++;
      calls.set(call, { resolve: resolve as PendingCall['resolve'], reject });
      try {
        port.postMessage([message(call)]);
      } catch (error) {
        calls.delete(call);
        reject(error as Error);
      }
    });
  const settleCall = (call: number, error: Error | null, value?: unknown) => {
    const pending = calls.get(call);
    calls.delete(call);
    if (error) pending?.reject(error);
    else pending?.resolve(value);
  };
  const generateKey: RunInput['generateKey'] = (algorithm, extractable, usages) =>
    callPool((call) => ({ kind: 'generate-key', call, algorithm, extractable, usages }));
  const cancellations = new SlotMap<number, SharedCancellation>();
  const codes = new ThreadCodes();
  /** Runs that came without their code's text, until it comes. */
  const lackingCode = new Map<number, Extract<ToWorker, { kind: 'run' }>>();
  const receive = (message: ToWorker) => {
    if (message.kind === 'cancel') return void cancellations.get(message.id)?.notify();
    // The thread ends on its own once its cancelled runs end and nothing is pending: terminating it
    // mid-way through native work can abort the whole process (WorkerPool.close).
    if (message.kind === 'stop') return void port.unref();
    if (message.kind === 'file') return settleCall(message.call, message.data ? null : new Error(message.error ?? 'The file could not be read.'), message.data);
    // Node's error keeps its name (OperationError, SyntaxError...): the crypto module maps it as it would on this thread.
    if (message.kind === 'journalled') {
      return settleCall(message.call, message.error ? Object.assign(new Error(message.error.message), { name: message.error.name }) : null, message.entry);
    }
    if (message.kind === 'key') return settleCall(message.call, message.key ? null : Object.assign(new Error(message.error?.message), { name: message.error?.name }), message.key);
    if (message.kind === 'code') {
      const waiting = lackingCode.get(message.id);
      lackingCode.delete(message.id);
      if (waiting) receive({ ...waiting, code: message.code, codeId: message.codeId });
      return;
    }
    const { id, input, codeId, readsFiles, streamsLogs, cancelCell } = message;
    if (message.code !== undefined) codes.learn(input.cacheKey, codeId, message.code);
    const code = codes.get(input.cacheKey, codeId);
    if (code === undefined) {
      lackingCode.set(id, message);
      send({ kind: 'code-missing', id });
      return;
    }
    const cancel = cancelCell === undefined ? undefined : new SharedCancellation(cancelFlags, cancelCell);
    if (cancel) cancellations.set(id, cancel);
    const readFile: RunInput['readFile'] = readsFiles ? (fileId, range) => callPool((call) => ({ kind: 'read-file', id, call, fileId, range })) : undefined;
    const onLogs = streamsLogs ? (lines: LogLine[]) => send({ kind: 'logs', id, lines }) : undefined;
    const journal = <T>(write: JournalWrite) => callPool<T>((call) => ({ kind: 'journal', id, call, write }));
    const durable: DurableRun | undefined = input.durable
      ? {
          ...input.durable,
          record: (step) => journal({ op: 'record', step }),
          beginWait: (wait) => journal({ op: 'beginWait', wait }),
          timeOut: (step) => journal({ op: 'timeOut', step }),
        }
      : undefined;
    const onLong = held.length > 0 ? postHeld : undefined;
    // The run waits on the host: this thread is free for other runs meanwhile. Told at once when that
    // comes later than this turn (the run's sandbox had to be made first).
    let inThisTurn = true;
    const onWaitsOnHost = () => {
      held.push({ kind: 'waiting', id });
      if (!inThisTurn) postHeld();
    };
    // The message's own input, completed in place: a spread of it into a new object measured as most of
    // what this thread promoted to V8's old generation.
    const run: RunInput = Object.assign(input, {
      rawBody: rawBodyOf(input.entityJson, input.rawBody, input.rawBodySpan),
      code,
      onProgress: (progress: Progress) => send({ kind: 'progress', id, progress }),
      onLogs,
      readFile,
      durable,
      generateKey,
      cancel,
      onLong,
      onWaitsOnHost,
    });
    const outcome = engine.start(run);
    inThisTurn = false;
    if (!(outcome instanceof Promise)) {
      cancellations.delete(id);
      held.push({ kind: 'result', id, result: outcome });
      return;
    }
    void outcome.then((result) => {
      cancellations.delete(id);
      held.push({ kind: 'result', id, result });
      postHeld();
    });
  };
  port.on('message', (messages: ToWorker[]) => {
    messages.forEach(receive);
    postHeld();
  });
  send({ kind: 'ready' });
}

void main();
