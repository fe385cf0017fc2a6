/**
 * Entry of a sandbox worker thread: runs connectors off the main event loop, so a busy connector
 * cannot stall the process (HTTP servers, lease heartbeats). Several runs may share a worker while
 * they wait on host calls.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SandboxEngine } from './sandbox-engine';
import type { FromWorker, SandboxWorkerData, ToWorker } from './sandbox-worker.protocol';

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('The sandbox worker must run in a worker thread.');
  const { env } = workerData as SandboxWorkerData;
  const engine = await SandboxEngine.create(env);
  const send = (message: FromWorker) => port.postMessage(message);
  port.on('message', (message: ToWorker) => {
    if (message.kind !== 'run') return;
    const { id, input } = message;
    void engine.run({ ...input, onProgress: (progress) => send({ kind: 'progress', id, progress }) }).then((result) => send({ kind: 'result', id, result }));
  });
  send({ kind: 'ready' });
}

void main();
