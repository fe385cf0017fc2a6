import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { badRequest, GiError } from '@gi/domain';
import type { FileEntity, FileOwner, FileStore } from '@gi/domain';
import { BodyDeadline, stopReading } from '@gi/http';
import type { BodyTimeouts } from '@gi/http';
import type { Logger } from '@gi/observability';
import { FormFields } from './form-fields';
import { MultipartGuard } from './multipart-guard';
import { diskLow, type StorageGuard, type UploadSpace } from './storage-guard';

/** Limits of one GenericIntegrationFileTransfer call; crossing any of them answers 413 at once. */
export interface UploadLimits {
  maxFileBytes: number;
  maxFiles: number;
  /** The whole multipart body, as sent. */
  maxUploadBytes: number;
  maxFields: number;
  maxFieldBytes: number;
  /** All non-file parts together: they become RequestBody, stored with the invocation. */
  maxFieldsTotalBytes: number;
  maxPartHeaderBytes: number;
  /** The deepest nesting of a part sent as JSON (400 beyond it). */
  maxJsonDepth: number;
}

export interface Uploads {
  files: FileStore;
  limits: UploadLimits;
  /** The bots' storage quota and the disk's free-space reserve; unchecked when absent. */
  storage?: StorageGuard;
  /** A pause in an upload ends it as soon as in a text body; the whole upload may take longer. */
  timeouts: BodyTimeouts;
}

/** A multipart call read to its end: RequestBody from the fields, RequestFiles from the stored files. */
export interface ReceivedRequest {
  body: Record<string, unknown>;
  files: FileEntity[];
}

export const uploadTooLarge = (detail: string) => new GiError('payload_too_large', 'Payload too large', detail);

/**
 * Streams a multipart/form-data request: each file goes straight to the file store (its SHA-256 and
 * size computed on the way), the other parts form RequestBody. No file is ever held in memory: the
 * request is paused whenever the disk is slower than the client. Any failure (a limit, a malformed
 * body, the client hanging up, the disk) stops parsing and storing at once, removes every file
 * already written, and closes the connection a moment after the reply.
 *
 * Files whose part has no file name and no bytes are skipped: that is what browsers send for a file
 * input left empty. A named file of zero bytes is kept (Size 0).
 */
export async function receiveFiles(req: IncomingMessage, uploads: Uploads, owner: FileOwner, logger: Pick<Logger, 'error'>): Promise<ReceivedRequest> {
  // Checked before a byte of the body is read.
  const space = await uploads.storage?.open(owner.botId);
  try {
    const received = await streamFiles(req, uploads, owner, logger, space);
    space?.end(true);
    return received;
  } catch (error) {
    space?.end(false);
    throw error;
  }
}

function streamFiles(req: IncomingMessage, uploads: Uploads, owner: FileOwner, logger: Pick<Logger, 'error'>, space: UploadSpace | undefined): Promise<ReceivedRequest> {
  const { files: store, limits, timeouts } = uploads;
  return new Promise<ReceivedRequest>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        // The parser reports a size limit once it is reached, not passed: one byte more keeps a file or
        // field of exactly the limit acceptable.
        limits: {
          fileSize: limits.maxFileBytes + 1,
          files: limits.maxFiles,
          fields: limits.maxFields,
          fieldSize: limits.maxFieldBytes + 1,
          parts: limits.maxFiles + limits.maxFields + 1,
        },
      });
    } catch (error) {
      reject(badRequest(`The multipart body cannot be read: ${(error as Error).message}.`));
      return;
    }
    const guard = new MultipartGuard(boundaryOf(req.headers['content-type'] ?? ''), {
      maxHeaderBytes: limits.maxPartHeaderBytes,
      maxFieldBytes: limits.maxFieldBytes,
    });
    const fields = new FormFields(limits.maxJsonDepth);
    const written: Array<Promise<FileEntity | null>> = [];
    const open = new Set<Readable>();
    let received = 0;
    let fieldBytes = 0;
    let failure: Error | null = null;
    let finished = false;

    const fail = (error: Error) => {
      if (failure || finished) return;
      failure = error;
      deadline.stop();
      req.off('data', onData);
      stopReading(req);
      // Limits are reported from inside the parser's write: tear it down once that has returned.
      setImmediate(() => {
        for (const stream of open) stream.destroy(error);
        parser.destroy();
        // Every write ends (its partial file removed) before the owner's files are removed as a whole.
        void Promise.allSettled(written)
          .then(() => store.deleteAll(owner))
          .then(
            () => reject(error),
            () => reject(error),
          );
      });
    };

    const deadline = new BodyDeadline(timeouts, fail);
    const onData = (chunk: Buffer) => {
      deadline.touch();
      received += chunk.length;
      if (received > limits.maxUploadBytes) return fail(uploadTooLarge(`The upload is larger than the limit of ${limits.maxUploadBytes} bytes (MAX_UPLOAD_SIZE).`));
      const noRoom = space?.take(chunk.length);
      if (noRoom) return fail(noRoom);
      const verdict = guard.push(chunk);
      if (verdict === 'header-too-large') return fail(uploadTooLarge(`A part's headers are larger than the limit of ${limits.maxPartHeaderBytes} bytes (MAX_PART_HEADER_SIZE).`));
      if (verdict === 'field-too-large') return fail(fieldTooLarge(limits));
      if (!parser.write(chunk)) {
        req.pause();
        deadline.hold();
      }
    };
    parser.on('drain', () => {
      if (failure) return;
      deadline.touch();
      req.resume();
    });
    req.on('data', onData);
    req.on('end', () => {
      deadline.stop();
      if (!failure) parser.end();
    });
    req.on('error', () => fail(aborted()));
    req.on('close', () => {
      if (!req.complete) fail(aborted());
    });

    parser.on('file', (name, stream, info) => {
      // Its errors reach the store's write (which may start reading only later) and the parser's 'error';
      // a stream left without a listener would end the process when the parser is torn down.
      stream.on('error', () => undefined);
      if (failure) return void stream.resume();
      open.add(stream);
      stream.once('limit', () => fail(uploadTooLarge(`A file is larger than the limit of ${limits.maxFileBytes} bytes (MAX_FILE_SIZE).`)));
      const fileName = info.filename ?? '';
      const entity = store.write(owner, stream).then(
        async (stored): Promise<FileEntity | null> => {
          open.delete(stream);
          if (stored.size === 0 && fileName === '') {
            await store.delete(owner, stored.id);
            return null;
          }
          return { Id: stored.id, FileName: fileName, ContentType: info.mimeType, Size: stored.size, Sha256: stored.sha256, PartName: name ?? '' };
        },
        (error: Error) => {
          open.delete(stream);
          // The store failed (an errno: ENOSPC, EIO...; a database connection lost): the service is at fault; its cause is
          // logged, never sent. A store that fails mid-file leaves the stream errored too (reading it stops with an
          // AbortError), so only the stream's own error is the request's fault.
          if (isSystemError(error) || stream.errored !== error) {
            if (!failure) logger.error({ err: error, invocationId: owner.id }, 'file store write failed');
            fail(storeFailure(error));
          }
          // The file stream itself failed (the body ended inside a file): the request is at fault, not the disk.
          else fail(malformed(error));
          return null;
        },
      );
      written.push(entity);
    });
    parser.on('field', (name, value, info) => {
      if (failure) return;
      if (info.valueTruncated) return fail(fieldTooLarge(limits));
      fieldBytes += Buffer.byteLength(value);
      if (fieldBytes > limits.maxFieldsTotalBytes) {
        return fail(uploadTooLarge(`The form fields together are larger than the limit of ${limits.maxFieldsTotalBytes} bytes (MAX_BODY_SIZE).`));
      }
      try {
        fields.add(name, value, info.mimeType);
      } catch (error) {
        fail(error as Error);
      }
    });
    parser.on('filesLimit', () => fail(uploadTooLarge(`The upload has more than ${limits.maxFiles} files (MAX_FILES).`)));
    parser.on('fieldsLimit', () => fail(uploadTooLarge(`The upload has more than ${limits.maxFields} form fields (MAX_FORM_FIELDS).`)));
    parser.on('partsLimit', () => fail(uploadTooLarge(`The upload has more than ${limits.maxFiles + limits.maxFields + 1} parts.`)));
    parser.on('error', (error: Error) => fail(malformed(error)));
    parser.on('finish', () => {
      void Promise.all(written).then((entities) => {
        if (failure) return;
        finished = true;
        resolve({ body: fields.toRequestBody(), files: entities.filter((e): e is FileEntity => e !== null) });
      });
    });
  });
}

function boundaryOf(contentType: string): string {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  return match?.[1] ?? match?.[2] ?? '';
}

const fieldTooLarge = (limits: UploadLimits) => uploadTooLarge(`A form field is larger than the limit of ${limits.maxFieldBytes} bytes (MAX_FIELD_SIZE).`);

const aborted = () => badRequest('The upload was aborted before its end; nothing was stored.');

const malformed = (error: Error) => badRequest(`The multipart body is malformed (${error.message.replace(/^Multipart: /, '')}); nothing was stored.`);

/** An error of the operating system (it carries an errno code such as ENOSPC or EIO). */
const isSystemError = (error: Error) => typeof (error as NodeJS.ErrnoException).code === 'string' && /^E[A-Z0-9]+$/.test((error as NodeJS.ErrnoException).code ?? '');

/** Errno codes of a disk (or a quota) with no room left: 507, the others 503. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/** The file store failed (disk full, an I/O error...): the caller may try again; the cause is logged, never sent. */
const storeFailure = (error: Error) =>
  error instanceof GiError
    ? error
    : NO_SPACE.has((error as NodeJS.ErrnoException).code ?? '')
      ? diskLow()
      : new GiError('unavailable', 'Service unavailable', 'The uploaded files could not be stored; nothing was accepted. Try again.', {
          headers: { 'Retry-After': '5' },
        });
