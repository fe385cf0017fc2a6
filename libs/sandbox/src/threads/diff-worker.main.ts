import { parentPort } from 'node:worker_threads';
import { diffVersions } from '@gi/domain';
import type { DiffRequest, DiffAnswer } from './diff-thread';

/** The diff thread (see DiffThread): each request diffed as it comes, its answer posted back. */
parentPort?.on('message', (request: DiffRequest) => {
  void diffVersions(request.from, request.to).then(
    // As JSON text: one flat string crosses to the calling thread, which sends it as it is.
    (diff) => parentPort?.postMessage({ id: request.id, json: JSON.stringify(diff) } satisfies DiffAnswer),
    (error: unknown) => parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies DiffAnswer),
  );
});
