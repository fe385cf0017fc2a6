import { isUtf8 } from 'node:buffer';
import type { Context } from 'koa';
import { badRequest, payloadTooLarge, unsupportedMediaType } from '@gi/domain';
import { BodyDeadline } from './body-deadline';
import type { BodyTimeouts } from './body-deadline';

export interface TextBodyLimits extends BodyTimeouts {
  maxBytes: number;
}

/**
 * Reads the whole request body as text, exactly as sent: its UTF-8 bytes are the bytes received (a
 * byte order mark included). Refuses more than `maxBytes` with 413 before reading past it (at once when
 * Content-Length says so), a body that pauses or takes too long with 408, a charset other than UTF-8
 * (or its ASCII subset) with 415, and bytes that are not UTF-8 with 400: a body is never altered.
 * `checkBytes` sees the bytes exactly as received, before anything reads them as text (an integration's
 * inbound signature check), and may refuse them.
 */
export async function readExactTextBody(ctx: Context, limits: TextBodyLimits, checkBytes?: (bytes: Buffer) => void): Promise<string> {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(ctx.get('content-type'))?.[1]?.toLowerCase();
  if (charset && !['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(charset)) {
    throw unsupportedMediaType(`Charset '${charset}' is not supported; send UTF-8.`);
  }
  const bytes = await readBody(ctx, limits);
  checkBytes?.(bytes);
  if (!isUtf8(bytes)) throw badRequest('The request body is not valid UTF-8 text.');
  return bytes.toString('utf8');
}

/** The whole request body as text (see readExactTextBody) without a leading byte order mark. */
export async function readTextBody(ctx: Context, limits: TextBodyLimits): Promise<string> {
  return withoutByteOrderMark(await readExactTextBody(ctx, limits));
}

/** A byte order mark is not part of the text (JSON forbids it there). */
export const withoutByteOrderMark = (text: string) => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

function readBody(ctx: Context, limits: TextBodyLimits): Promise<Buffer> {
  const { req } = ctx;
  const tooLarge = () => payloadTooLarge(`The request body is larger than the limit of ${limits.maxBytes} bytes.`);
  if (Number(ctx.get('content-length') || 0) > limits.maxBytes) return Promise.reject(tooLarge());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: Error | null) => {
      deadline?.stop();
      req.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxBytes) return finish(tooLarge());
      chunks.push(chunk);
      deadline?.touch();
    };
    const onEnd = () => finish(null);
    const onAborted = () => finish(badRequest('The request was aborted while its body was read.'));
    const onClose = () => {
      if (!req.complete) onAborted();
    };
    // A body that arrived with its headers (most webhook calls) needs no clock.
    const deadline = req.complete ? null : new BodyDeadline(limits, finish);
    req.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onClose);
  });
}
