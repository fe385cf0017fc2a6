import type { ConnectorFileReader, FileEntity, FileStore, InvocationRef } from '@gi/domain';

/** Where a failed read is logged (a pino logger has this shape). */
export interface FileReadLog {
  error(fields: object, message: string): void;
}

/**
 * `Context.ReadFile` for one run (live or replayed): only the files its own request carried
 * (RequestFiles), read from the file store under that invocation. Undefined when the request has no files. Rejections carry
 * messages for the connector; store failures are logged, never shown.
 */
export function connectorFileReader(
  files: FileStore | undefined,
  owner: InvocationRef,
  requestFiles: FileEntity[] | undefined,
  log: FileReadLog,
): ConnectorFileReader | undefined {
  if (!files || !requestFiles?.length) return undefined;
  const known = new Map(requestFiles.map((file) => [file.Id, file]));
  return async (id, range) => {
    const file = known.get(id);
    if (!file) throw new Error(`No file with Id '${id.slice(0, 100)}' was uploaded with this request.`);
    let bytes: Uint8Array | null;
    try {
      bytes = await files.read(owner, id, range);
    } catch (err) {
      log.error({ err, fileId: id }, 'file read failed');
      throw new Error(`The file '${file.FileName}' could not be read; try again later.`);
    }
    if (!bytes) throw new Error(`The file '${file.FileName}' is no longer stored.`);
    return bytes;
  };
}
