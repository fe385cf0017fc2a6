import type { FileStore, InvocationStore } from '@gi/domain';

/**
 * Files live as long as their invocation: deletes the files of every owner last written before
 * `before` whose invocation the store no longer holds (expired, deleted, or never stored because
 * the upload failed or the process died mid-way). `before` leaves uploads still running alone.
 */
export async function sweepFiles(deps: { files: FileStore; invocations: InvocationStore }, before: number): Promise<number> {
  let deleted = 0;
  for (const owner of await deps.files.listOwners(before)) {
    if (await deps.invocations.get(owner)) continue;
    await deps.files.deleteAll(owner);
    deleted++;
  }
  return deleted;
}
