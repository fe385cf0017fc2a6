import { Worker } from 'node:worker_threads';
import { diffVersions } from '@gi/domain';
import type { Versioned } from '@gi/domain';
import { locateWorkerScript, type WorkerEntry, type WorkerScript } from './worker-script';

const DIFF_WORKER: WorkerEntry = { name: 'diff-worker.main', bundled: 'diff-worker.js' };

export interface DiffRequest {
  id: number;
  from: Versioned;
  to: Versioned;
}

/** The diff as JSON text (a VersionDiff), or why it failed. */
export type DiffAnswer = { id: number; json: string } | { id: number; error: string };

/**
 * Version diffs of the control API on a thread of their own: splitting, comparing and writing out
 * versions of up to 1 MiB of code and 1 MiB of sources, and the garbage that leaves, never hold the
 * event loop that answers webhook calls. The thread starts at the first diff and is replaced when it
 * fails; where no worker entry can be found, diffs run on the calling thread (still within their
 * budget, and giving way between steps).
 */
export class DiffThread {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, { resolve: (json: string) => void; reject: (error: Error) => void }>();
  private next = 0;

  constructor(private readonly script: WorkerScript | null = locateWorkerScript(__dirname, DIFF_WORKER)) {}

  /** Whether diffs run on their own thread. */
  get threaded(): boolean {
    return this.script !== null;
  }

  /** The VersionDiff of two versions, as JSON text (so the calling thread neither copies nor serialises its parts). */
  async diffJson(from: Versioned, to: Versioned): Promise<string> {
    if (!this.script) return JSON.stringify(await diffVersions(from, to));
    const worker = (this.worker ??= this.spawn(this.script));
    const id = ++this.next;
    return new Promise<string>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.postMessage({ id, from, to } satisfies DiffRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private spawn(script: WorkerScript): Worker {
    const worker = new Worker(script.kind === 'file' ? script.filename : script.bootstrap, {
      eval: script.kind === 'typescript',
      workerData: script.kind === 'typescript' ? { typescript: { swcCore: script.swcCore, entry: script.entry } } : {},
    });
    worker.on('message', (answer: DiffAnswer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if ('json' in answer) waiter?.resolve(answer.json);
      else waiter?.reject(new Error(answer.error));
    });
    const failed = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    };
    worker.on('error', failed);
    worker.on('exit', () => failed(new Error('The diff thread ended.')));
    // The thread keeps no process alive (unreferenced once its listeners are on: adding one references it again).
    worker.unref();
    return worker;
  }
}
