import type { FileStore, InvocationStore } from '@gi/domain';

export interface FileSweepResult {
  /** Owners whose files were deleted. */
  owners: number;
  /** Writes that never finished and belonged to no listed owner (GridFS chunks without a file). */
  abandoned: number;
}

/**
 * Files live as long as their invocation: deletes the files of every owner last written before
 * `before` whose invocation the store no longer holds (expired, deleted, or never stored because
 * the upload failed or the process died mid-way), then what writes begun before `before` left behind
 * without an owner, where the file store keeps such leftovers apart. `before` must leave every upload
 * still running alone.
 */
export async function sweepFiles(deps: { files: FileStore; invocations: InvocationStore }, before: number): Promise<FileSweepResult> {
  let owners = 0;
  for (const owner of await deps.files.listOwners(before)) {
    if (await deps.invocations.get(owner)) continue;
    await deps.files.deleteAll(owner);
    owners++;
  }
  const abandoned = (await deps.files.deleteAbandoned?.(before)) ?? 0;
  return { owners, abandoned };
}
