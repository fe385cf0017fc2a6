import { AsyncResource } from 'node:async_hooks';
import { Worker } from 'node:worker_threads';
import type { RunInput } from '../run/run-connector';
import { Outbox } from './outbox';
import { Deadlines, FairQueue, KeyCounts, LruMap, SlotMap, type JournalEntry } from '@gi/domain';
import { CancelCells, type RunCancellation } from './run-cancellation';
import { cancelledVerdict, timeoutVerdict, withRunFacts, type SandboxResult } from '../run/run-verdict';
import { WORKER_MEMORY_BUDGET_BYTES, WORKER_STACK_MB, WORKER_YOUNG_GENERATION_MB, type SandboxEnvironment } from '../sandbox-options';
import { workerRunInput, type FromWorker, type SandboxWorkerData, type ToWorker } from './sandbox-worker.protocol';
import { CodeIds, SentCodes } from './worker-code';
import type { WorkerScript } from './worker-script';
import { generateKeyHere } from '../host/crypto.host';

export interface WorkerPoolOptions {
  size: number;
  /** Runs one worker holds at once; they share its thread while they wait on host calls. */
  runsPerWorker: number;
  /** Runs of one tenant the workers hold at once, at most (default: no cap). */
  runsPerTenant?: number;
  env: SandboxEnvironment;
  script: WorkerScript;
  /**
   * Extra time past a run's own limit before its worker is terminated. The engine stops code at
   * the deadline; this catches the rare native operation that does not check in time.
   */
  killGraceMs: number;
}

interface PendingRun {
  id: number;
  input: RunInput;
  started: number;
  resolve: (result: SandboxResult) => void;
  /** Its worker, once it was handed to one. */
  slot?: Slot;
  /** Whether the run can be cancelled (it came with a cancellation). */
  cancellable: boolean;
  /** Its cell of the worker's cancellation flags, once it runs there. */
  cancelCell?: number;
  /** Its ticket in `overdue`, once it was handed to a worker. */
  overdue?: number;
  /** Removes the run's listener of its cancellation. */
  forget?: () => void;
  /** Its worker said it waits on the host: it no longer holds the thread. */
  waiting: boolean;
  /** Its connector's runs lately were quick: other quick runs may queue behind it on its thread. */
  quick: boolean;
}

interface Slot {
  worker: Worker;
  outbox: Outbox<ToWorker>;
  ready: boolean;
  runs: SlotMap<number, PendingRun>;
  /** Its runs that hold the thread: handed to it, not yet ended nor waiting on the host. */
  computing: number;
  /** Those of them not known to be quick: while one computes, no run queues behind it. */
  computingSlow: number;
  /** The memory limits of its runs, added up. */
  memoryBytes: number;
  cancelCells: CancelCells;
  /** The codes sent to its thread. */
  codes: SentCodes;
}

/**
 * Quick runs one thread may hold at once: those after the first wait on the thread, so it goes from
 * one to the next without a round trip through the pool. Only runs of connectors known to be quick
 * queue so, and only behind runs of such connectors.
 */
const QUEUED_QUICK_RUNS = 16;
/** A connector whose runs lately took less than this (on average) is quick. */
const QUICK_RUN_MS = 2;
/** Connectors whose run times are remembered. */
const TIMED_CONNECTORS = 1024;

/**
 * How long a closing pool waits for a thread to end on its own before it terminates it. Node aborts
 * the whole process when some native work of a thread (a zlib stream being made, a key being made)
 * completes as the thread is terminated; a thread that ends on its own has none left.
 */
const STOP_GRACE_MS = 2000;

/** Consecutive workers that die before they are ready, after which the pool stops trying. */
const MAX_STARTUP_FAILURES = 3;

/** A pool of worker threads running connectors; the process's own event loop never runs connector code. */
export class WorkerPool {
  private readonly slots = new Set<Slot>();
  /** Runs waiting for a thread, in turns between tenants. */
  private readonly queue = new FairQueue<PendingRun>((run) => run.input.tenant ?? '');
  /** Runs handed to workers, by tenant. */
  private readonly tenantRuns = new KeyCounts();
  /** How long each connector's runs took lately (a moving average, ms), by cache key. */
  private readonly runTimes = new LruMap<string, number>(TIMED_CONNECTORS);
  private readonly codeIds = new CodeIds();
  /** Runs handed to workers, by when their worker is terminated if they have not ended (limit and grace). */
  private readonly overdue = new Deadlines<PendingRun>((run) => void this.kill(run));
  private nextId = 1;
  private closed = false;
  private startupFailures = 0;
  private broken: string | null = null;
  /**
   * The async context of the pool's own machinery (workers, their messages and outboxes), made with
   * the pool: a worker replaced during some run belongs to the pool, not to that run.
   */
  private readonly scope = new AsyncResource('SandboxWorkerPool');

  constructor(private readonly options: WorkerPoolOptions) {
    for (let i = 0; i < options.size; i++) this.spawn();
  }

  /** Runs a connector; requesting `cancel` stops it, queued or running, with a `cancelled` result. */
  run(input: RunInput, cancel?: RunCancellation): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new Error('The connector runtime is closed.'));
    return new Promise((resolve) => {
      const run: PendingRun = { id: this.nextId++, input, started: performance.now(), resolve, cancellable: cancel !== undefined, waiting: false, quick: false };
      if (this.broken) return resolve(this.failure(run, this.broken));
      if (cancel?.requested) return resolve(withRunFacts(cancelledVerdict, this.facts(run, cancelledVerdict.message)));
      if (cancel) run.forget = cancel.onRequest(() => this.cancel(run));
      this.queue.push(run);
      this.dispatch();
    });
  }

  /** Threads, the busy ones, runs in them and runs waiting: counted when asked (a scrape), not kept. */
  load(): { threads: number; busyThreads: number; running: number; queued: number } {
    let busyThreads = 0;
    let running = 0;
    for (const slot of this.slots) {
      if (slot.runs.size > 0) busyThreads++;
      running += slot.runs.size;
    }
    return { threads: this.slots.size, busyThreads, running, queued: this.queue.size };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const run of this.queue.removeWhere(() => true)) this.settleQueued(run, this.failure(run, 'The connector runtime was closed before the run started.'));
    await Promise.all([...this.slots].map((slot) => this.stop(slot)));
    this.overdue.clear();
  }

  /**
   * Ends a worker as the pool closes: its runs fail (and are cancelled where they can be), and it is
   * asked to exit on its own; terminated only if it has not within STOP_GRACE_MS.
   */
  private async stop(slot: Slot): Promise<void> {
    for (const run of slot.runs.values()) {
      if (run.cancelCell === undefined) continue;
      slot.cancelCells.raise(run.cancelCell);
      slot.worker.postMessage([{ kind: 'cancel', id: run.id } satisfies ToWorker]);
    }
    if (!this.takeOut(slot, 'The connector runtime was closed during the run.')) return;
    const exited = new Promise<void>((resolve) => slot.worker.once('exit', () => resolve()));
    slot.worker.postMessage([{ kind: 'stop' } satisfies ToWorker]);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
    if ((await Promise.race([exited, late])) === 'late') await slot.worker.terminate();
    clearTimeout(timer);
  }

  private spawn(): void {
    this.scope.runInAsyncScope(() => this.spawnWorker());
  }

  private spawnWorker(): void {
    const { script, env } = this.options;
    const cancelCells = new CancelCells(this.options.runsPerWorker);
    const workerData: SandboxWorkerData = { env, cancelFlags: cancelCells.flags };
    if (script.kind === 'typescript') workerData.typescript = { swcCore: script.swcCore, entry: script.entry };
    const worker = new Worker(script.kind === 'file' ? script.filename : script.bootstrap, {
      eval: script.kind === 'typescript',
      workerData,
      resourceLimits: { stackSizeMb: WORKER_STACK_MB, maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const outbox = new Outbox<ToWorker>(
      (messages) => {
        if (this.slots.has(slot)) worker.postMessage(messages);
      },
      (message, error) => this.undeliverable(slot, message, error),
    );
    const slot: Slot = { worker, outbox, ready: false, runs: new SlotMap(), computing: 0, computingSlow: 0, memoryBytes: 0, cancelCells, codes: new SentCodes() };
    this.slots.add(slot);
    worker.unref();
    worker.on('message', (messages: FromWorker[]) => {
      for (const message of messages) this.onMessage(slot, message);
    });
    // A message that cannot be read is lost, and with it maybe a run's result: the runs there cannot be trusted to end.
    worker.on('messageerror', (error) => void this.retire(slot, `A message from the sandbox worker could not be read: ${error.message}`));
    worker.on('error', (error) => void this.onExit(slot, `The sandbox worker failed: ${error.message}`));
    worker.on('exit', (code) => void this.onExit(slot, `The sandbox worker stopped unexpectedly (exit code ${code}).`));
  }

  private onMessage(slot: Slot, message: FromWorker): void {
    switch (message.kind) {
      case 'ready':
        slot.ready = true;
        this.startupFailures = 0;
        this.dispatch();
        return;
      case 'progress':
        try {
          slot.runs.get(message.id)?.input.onProgress?.(message.progress);
        } catch {
          // A failing progress listener is the host's problem, never the connector's.
        }
        return;
      case 'logs':
        try {
          slot.runs.get(message.id)?.input.onLogs?.(message.lines);
        } catch {
          // A failing listener is the host's problem, never the connector's.
        }
        return;
      case 'read-file':
        this.readFile(slot, message);
        return;
      case 'generate-key':
        this.generateKey(slot, message);
        return;
      case 'journal':
        this.journal(slot, message);
        return;
      case 'code-missing': {
        const run = slot.runs.get(message.id);
        if (!run) return;
        const codeId = this.codeIds.idOf(run.input.cacheKey, run.input.code);
        slot.codes.sentBefore(run.input.cacheKey, codeId);
        slot.outbox.send({ kind: 'code', id: run.id, codeId, code: run.input.code });
        return;
      }
      case 'waiting': {
        const run = slot.runs.get(message.id);
        if (!run || run.waiting) return;
        run.waiting = true;
        this.stopComputing(slot, run);
        this.dispatch();
        return;
      }
      case 'result': {
        const run = slot.runs.get(message.id);
        if (!run) return;
        this.timeRun(run.input.cacheKey, message.result.durationMs);
        this.finish(slot, run, message.result);
        this.dispatch();
        return;
      }
    }
  }

  /**
   * Sends queued runs to ready workers whose thread no run holds (every run there ended or waits on the
   * host), the one with fewest runs first: in turns between tenants, in order within a tenant, and
   * never more of one tenant's than `runsPerTenant`. A run of a quick connector may also join a thread
   * that computes only quick runs, up to QUEUED_QUICK_RUNS. Any other run waits here for the first free
   * thread: a long run never holds another one behind it while a thread is free.
   */
  private dispatch(): void {
    const perTenant = this.options.runsPerTenant ?? Number.POSITIVE_INFINITY;
    while (this.queue.size > 0) {
      let best: Slot | null = null;
      const next = this.queue.take((tenant) => this.tenantRuns.of(tenant) < perTenant && (best = this.slotFor(this.queue.peek(tenant) as PendingRun)) !== null);
      if (!next || !best) return;
      this.start(best, next);
    }
  }

  /** The worker a run would go to now; null when none has room for it. */
  private slotFor(run: PendingRun): Slot | null {
    run.quick = (this.runTimes.get(run.input.cacheKey) ?? Infinity) < QUICK_RUN_MS;
    const rank = (slot: Slot) => slot.computing * this.options.runsPerWorker + slot.runs.size;
    let best: Slot | null = null;
    for (const slot of this.slots) {
      if (this.hasRoom(slot, run) && (!best || rank(slot) < rank(best))) best = slot;
    }
    return best;
  }

  private timeRun(cacheKey: string, durationMs: number): void {
    const before = this.runTimes.get(cacheKey);
    this.runTimes.set(cacheKey, before === undefined ? durationMs : before * 0.8 + durationMs * 0.2);
  }

  /** A thread free for the run, room for one more run, and for its memory limit within the worker's budget. */
  private hasRoom(slot: Slot, run: PendingRun): boolean {
    const free = slot.computing === 0 || (run.quick && slot.computingSlow === 0 && slot.computing < QUEUED_QUICK_RUNS);
    return slot.ready && free && slot.runs.size < this.options.runsPerWorker && slot.memoryBytes + run.input.limits.memoryBytes <= WORKER_MEMORY_BUDGET_BYTES;
  }

  private start(slot: Slot, run: PendingRun): void {
    slot.runs.set(run.id, run);
    this.tenantRuns.add(run.input.tenant ?? '');
    run.slot = slot;
    slot.computing++;
    if (!run.quick) slot.computingSlow++;
    slot.memoryBytes += run.input.limits.memoryBytes;
    if (slot.runs.size === 1) slot.worker.ref();
    const { input } = run;
    if (run.cancellable) run.cancelCell = slot.cancelCells.take() ?? undefined;
    const codeId = this.codeIds.idOf(input.cacheKey, input.code);
    const code = slot.codes.sentBefore(input.cacheKey, codeId) ? undefined : input.code;
    const message: ToWorker = { kind: 'run', id: run.id, input: workerRunInput(input), codeId, code, readsFiles: input.readFile !== undefined, streamsLogs: input.onLogs !== undefined, cancelCell: run.cancelCell };
    run.overdue = this.overdue.add(run, performance.now() + run.input.timeoutMs + this.options.killGraceMs);
    slot.outbox.send(message);
  }

  /** A run whose message cannot be posted to its worker fails; a lost wake-up of a cancelled run only delays its end. */
  private undeliverable(slot: Slot, message: ToWorker, error: unknown): void {
    if (message.kind !== 'run' && message.kind !== 'code') return;
    const run = slot.runs.get(message.id);
    // The thread never got this text: the next run of the code carries it again.
    if (run && message.code !== undefined) slot.codes.lost(run.input.cacheKey);
    if (run) this.finish(slot, run, this.failure(run, `The run could not be handed to its sandbox thread: ${(error as Error)?.message ?? 'unknown error'}`));
  }

  /** Reads a file for a run on a worker with the run's own reader, and sends the bytes back. */
  private readFile(slot: Slot, message: Extract<FromWorker, { kind: 'read-file' }>): void {
    const failed: ToWorker = { kind: 'file', call: message.call, error: 'The file could not be read.' };
    const reply = (answer: ToWorker, transfer: ArrayBuffer[] = []) => this.answer(slot, answer, failed, transfer);
    const reader = slot.runs.get(message.id)?.input.readFile;
    if (!reader) return reply({ kind: 'file', call: message.call, error: 'The file could not be read.' });
    reader(message.fileId, message.range).then(
      (bytes) => {
        // Moved, not copied, when the bytes own their buffer.
        const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
        const data = own ? bytes : new Uint8Array(bytes);
        reply({ kind: 'file', call: message.call, data }, [data.buffer as ArrayBuffer]);
      },
      (error: unknown) => reply({ kind: 'file', call: message.call, error: error instanceof Error ? error.message : 'The file could not be read.' }),
    );
  }

  /** Makes a journal write of a durable run on a worker with the run's own DurableRun, and sends the entry as stored back. */
  private journal(slot: Slot, message: Extract<FromWorker, { kind: 'journal' }>): void {
    const failed: ToWorker = { kind: 'journalled', call: message.call, error: { name: 'Error', message: 'The journal could not be written.' } };
    const reply = (answer: ToWorker) => this.answer(slot, answer, failed);
    const durable = slot.runs.get(message.id)?.input.durable;
    if (!durable) return reply({ kind: 'journalled', call: message.call, error: { name: 'Error', message: 'The run has ended.' } });
    const { write } = message;
    let written: Promise<JournalEntry>;
    try {
      written = write.op === 'record' ? durable.record(write.step) : write.op === 'beginWait' ? durable.beginWait(write.wait) : durable.timeOut(write.step);
    } catch (error) {
      written = Promise.reject(error);
    }
    written.then(
      (entry) => reply({ kind: 'journalled', call: message.call, entry }),
      (error: unknown) => {
        const { name, message: text } = error instanceof Error ? error : { name: 'Error', message: 'The journal could not be written.' };
        reply({ kind: 'journalled', call: message.call, error: { name, message: text } });
      },
    );
  }

  /**
   * Makes a key for a connector on a worker, here: a worker must never be stopped while Node makes a
   * key on it (generateKeyHere), and this thread is stopped only with the process.
   */
  private generateKey(slot: Slot, message: Extract<FromWorker, { kind: 'generate-key' }>): void {
    const failed: ToWorker = { kind: 'key', call: message.call, error: { name: 'OperationError', message: 'The key could not be sent to the sandbox thread.' } };
    const reply = (answer: ToWorker) => this.answer(slot, answer, failed);
    generateKeyHere(message.algorithm, message.extractable, message.usages).then(
      (key) => reply({ kind: 'key', call: message.call, key }),
      (error: unknown) => {
        const { name, message: text } = (error ?? {}) as { name?: unknown; message?: unknown };
        reply({ kind: 'key', call: message.call, error: { name: String(name ?? 'OperationError'), message: String(text ?? '') } });
      },
    );
  }

  /** Answers a worker's call, or, when the answer cannot be posted, sends `failed` in its place; nothing once the worker left the pool. */
  private answer(slot: Slot, answer: ToWorker, failed: ToWorker, transfer: ArrayBuffer[] = []): void {
    if (!this.slots.has(slot)) return;
    try {
      slot.worker.postMessage([answer], transfer);
    } catch {
      slot.worker.postMessage([failed]);
    }
  }

  /** A queued run never starts; a running one has its flag set (a spinning connector stops at once) and is woken. */
  private cancel(run: PendingRun): void {
    if (this.queue.remove(run)) {
      this.settleQueued(run, withRunFacts(cancelledVerdict, this.facts(run, cancelledVerdict.message)));
      return;
    }
    for (const slot of this.slots) {
      if (slot.runs.get(run.id) !== run || run.cancelCell === undefined) continue;
      slot.cancelCells.raise(run.cancelCell);
      slot.outbox.send({ kind: 'cancel', id: run.id });
    }
  }

  private stopComputing(slot: Slot, run: PendingRun): void {
    slot.computing--;
    if (!run.quick) slot.computingSlow--;
  }

  private settleQueued(run: PendingRun, result: SandboxResult): void {
    run.forget?.();
    run.resolve(result);
  }

  private finish(slot: Slot, run: PendingRun, result: SandboxResult): void {
    run.forget?.();
    if (run.overdue !== undefined) this.overdue.delete(run.overdue);
    if (slot.runs.delete(run.id)) {
      this.tenantRuns.remove(run.input.tenant ?? '');
      if (!run.waiting) this.stopComputing(slot, run);
      slot.memoryBytes -= run.input.limits.memoryBytes;
      if (run.cancelCell !== undefined) slot.cancelCells.release(run.cancelCell);
    }
    if (slot.runs.size === 0) slot.worker.unref();
    run.resolve(result);
  }

  /** A run went past its limit without the engine stopping it: terminate its worker. */
  private async kill(run: PendingRun): Promise<void> {
    const { slot } = run;
    if (!slot?.runs.has(run.id)) return;
    this.finish(slot, run, withRunFacts(timeoutVerdict(run.input.timeoutMs), this.facts(run, 'The run was stopped by force.')));
    await this.retire(slot, 'The sandbox was restarted because another connector on it stopped responding; the run may be tried again.');
  }

  /** Takes a worker out of the pool and fails its runs with `reason`; false when it was out already. */
  private takeOut(slot: Slot, reason: string): boolean {
    if (!this.slots.delete(slot)) return false;
    for (const run of [...slot.runs.values()]) this.finish(slot, run, this.failure(run, reason));
    slot.worker.removeAllListeners('exit');
    return true;
  }

  /** Takes a worker out of the pool (takeOut), terminates it, and replaces it unless closing. */
  private async retire(slot: Slot, reason: string): Promise<void> {
    if (!this.takeOut(slot, reason)) return;
    await slot.worker.terminate();
    if (!this.closed) {
      this.spawn();
      this.dispatch();
    }
  }

  private async onExit(slot: Slot, reason: string): Promise<void> {
    if (!this.slots.has(slot)) return;
    if (!slot.ready && ++this.startupFailures >= MAX_STARTUP_FAILURES) {
      this.broken = `The sandbox workers cannot start: ${reason}`;
      this.slots.delete(slot);
      for (const run of this.queue.removeWhere(() => true)) this.settleQueued(run, this.failure(run, this.broken as string));
      return;
    }
    await this.retire(slot, reason);
  }

  private failure(run: PendingRun, message: string): SandboxResult {
    return withRunFacts({ kind: 'failed', reason: 'threw', message }, this.facts(run, message));
  }

  private facts(run: PendingRun, message: string): Pick<SandboxResult, 'logs' | 'durationMs'> {
    return { logs: [{ at: Date.now(), level: 'error', message }], durationMs: performance.now() - run.started };
  }
}
