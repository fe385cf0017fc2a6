import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';

/** One part of a hand-made multipart body: a field (no filename) or a file. */
export interface Part {
  name?: string;
  filename?: string;
  contentType?: string;
  /** Extra header lines, e.g. to make a header block large. */
  headers?: string[];
  data: string | Buffer;
}

export const BOUNDARY = 'gi-e2e-boundary-7MA4YWxkTrZu0gW';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

const quote = (value: string) => `"${value.replace(/"/g, '%22')}"`;

export function partHead(part: Omit<Part, 'data'>): string {
  let disposition = 'form-data';
  if (part.name !== undefined) disposition += `; name=${quote(part.name)}`;
  if (part.filename !== undefined) disposition += `; filename=${quote(part.filename)}`;
  const lines = [`Content-Disposition: ${disposition}`, ...(part.contentType ? [`Content-Type: ${part.contentType}`] : []), ...(part.headers ?? [])];
  return `--${BOUNDARY}\r\n${lines.join('\r\n')}\r\n\r\n`;
}

const partBytes = (part: Part) => Buffer.concat([Buffer.from(partHead(part)), Buffer.from(part.data), Buffer.from('\r\n')]);

/** A whole multipart body, exactly as written (file names are sent as given, `../` included). */
export function multipartBody(parts: Part[]): Buffer {
  return Buffer.concat([...parts.map(partBytes), Buffer.from(`--${BOUNDARY}--\r\n`)]);
}

export interface StreamedUpload {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** SHA-256 of the file bytes sent. */
  sha256: string;
  /** Body bytes written when the reply arrived (or the upload ended). */
  sentAtReply: number;
  elapsedMs: number;
}

export interface StreamOptions {
  token: string;
  fileBytes: number;
  /** Parts sent before the file. */
  before?: Part[];
  /** Hang up (destroy the socket) after this many file bytes. */
  abortAfter?: number;
  /** Send Content-Length (else chunked). */
  contentLength?: boolean;
  /** Bytes sent after the closing delimiter (an epilogue, which parsers ignore). */
  epilogueBytes?: number;
}

const BLOCK = randomBytes(1024 * 1024);

/**
 * Streams one file of `fileBytes` pseudo-random bytes as a multipart upload, writing as fast as the
 * server reads (backpressure), never holding more than one 1 MiB block. Resolves with the reply,
 * which may come before the whole body was sent (a limit), or with status 0 when aborted.
 */
export function streamUpload(url: string, options: StreamOptions): Promise<StreamedUpload> {
  const head = Buffer.concat([...(options.before ?? []).map(partBytes), Buffer.from(partHead({ name: 'file', filename: 'big.bin', contentType: 'application/octet-stream' }))]);
  const tail = Buffer.concat([Buffer.from(`\r\n--${BOUNDARY}--\r\n`), Buffer.alloc(options.epilogueBytes ?? 0, 0x20)]);
  const total = head.length + options.fileBytes + tail.length;
  const hash = createHash('sha256');
  const started = performance.now();
  let sent = 0;
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${options.token}`,
        'content-type': MULTIPART,
        ...(options.contentLength === false ? {} : { 'content-length': String(total) }),
      },
    });
    let replied = false;
    req.on('response', (res) => {
      replied = true;
      const sentAtReply = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // A reply before the body was all sent (a refusal): stop sending.
        if (!req.writableFinished) req.destroy();
        const text = Buffer.concat(chunks).toString();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = text;
        }
        resolve({ status: res.statusCode ?? 0, json, sha256: hash.digest('hex'), sentAtReply, elapsedMs: performance.now() - started });
      });
    });
    req.on('error', (error) => {
      if (replied) return;
      if (options.abortAfter !== undefined) resolve({ status: 0, json: null, sha256: '', sentAtReply: sent, elapsedMs: performance.now() - started });
      else reject(error);
    });

    let fileSent = 0;
    const pump = () => {
      if (sent === 0) {
        req.write(head);
        sent += head.length;
      }
      while (fileSent < options.fileBytes) {
        if (replied) return;
        if (options.abortAfter !== undefined && fileSent >= options.abortAfter) return void req.destroy();
        const size = Math.min(BLOCK.length, options.fileBytes - fileSent);
        const chunk = BLOCK.subarray(0, size);
        hash.update(chunk);
        fileSent += size;
        sent += size;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end(tail);
      sent += tail.length;
    };
    pump();
  });
}
