/** How a checkpoint copies the WAL back: PASSIVE never waits for anyone; RESTART also makes the next write start the WAL over. */
export type CheckpointMode = 'PASSIVE' | 'RESTART';

/** What SQLite reports after a checkpoint: busy = it could not finish now; log and checkpointed count WAL pages. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/** A request to the checkpointer thread: run one checkpoint and answer its result, or close and end. */
export type CheckpointerRequest = CheckpointMode | 'close';

/** What the checkpointer thread is started with (its workerData). */
export interface CheckpointerWorkerData {
  /** Where better-sqlite3 was resolved on the calling thread, so the worker loads the same copy. */
  driver: string;
  path: string;
  /** How long a RESTART may wait for the write under way to end, then for readers to leave the WAL. */
  busyTimeoutMs: number;
}

/**
 * The checkpointer thread, evaluated from this string: the esbuild bundle then needs no extra file
 * beside it, and jest no TypeScript loader inside the worker. It only runs the checkpoints it is asked
 * for, one at a time, on its own connection; when to ask is decided by WalCheckpointer. An error ends it.
 */
export const CHECKPOINTER_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
parentPort.on('message', (request) => {
  if (request === 'close') {
    db.close();
    parentPort.close();
  } else if (request === 'PASSIVE' || request === 'RESTART') {
    parentPort.postMessage(db.pragma('wal_checkpoint(' + request + ')')[0]);
  }
});
`;
