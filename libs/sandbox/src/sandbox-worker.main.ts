/**
 * Entry of a sandbox worker thread: runs connectors off the main event loop, so a busy connector
 * cannot stall the process (HTTP servers, lease heartbeats). Several runs may share a worker while
 * they wait on host calls; the pool hands it another only while none of its runs computes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SandboxEngine } from './sandbox-engine';
import type { LogLine, Progress } from '@gi/domain';
import { SharedCancellation } from './run-cancellation';
import type { RunInput } from './run-input';
import type { FromWorker, SandboxWorkerData, ToWorker } from './sandbox-worker.protocol';
import { ThreadCodes } from './worker-code';

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
  const fileCalls = new Map<number, { resolve: (data: Uint8Array) => void; reject: (error: Error) => void }>();
  const cancellations = new Map<number, SharedCancellation>();
  const codes = new ThreadCodes();
  /** Runs that came without their code's text, until it comes. */
  const lackingCode = new Map<number, Extract<ToWorker, { kind: 'run' }>>();
  let nextCall = 1;
  const receive = (message: ToWorker) => {
    if (message.kind === 'cancel') return void cancellations.get(message.id)?.notify();
    if (message.kind === 'file') {
      const call = fileCalls.get(message.call);
      fileCalls.delete(message.call);
      if (message.data) call?.resolve(message.data);
      else call?.reject(new Error(message.error ?? 'The file could not be read.'));
      return;
    }
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
    const readFile: RunInput['readFile'] = readsFiles
      ? (fileId, range) =>
          new Promise<Uint8Array>((resolve, reject) => {
            const call = nextCall++;
            fileCalls.set(call, { resolve, reject });
            send({ kind: 'read-file', id, call, fileId, range });
          })
      : undefined;
    const onLogs = streamsLogs ? (lines: LogLine[]) => send({ kind: 'logs', id, lines }) : undefined;
    const onLong = held.length > 0 ? postHeld : undefined;
    // The run waits on the host: this thread is free for other runs meanwhile. Told at once when that
    // comes later than this turn (the run's sandbox had to be made first).
    let inThisTurn = true;
    const onWaitsOnHost = () => {
      held.push({ kind: 'waiting', id });
      if (!inThisTurn) postHeld();
    };
    const run = { ...input, code, readFile, cancel, onLogs, onLong, onWaitsOnHost, onProgress: (progress: Progress) => send({ kind: 'progress', id, progress }) };
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
