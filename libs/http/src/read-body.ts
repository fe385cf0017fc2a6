import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { badRequest, GiError, payloadTooLarge, unsupportedMediaType } from '@gi/domain';

/**
 * Reads the whole request body as text, refusing more than `limit` bytes with 413 before reading past it.
 * Only UTF-8 (the JSON and web default) and its ASCII subset are accepted as charsets.
 */
export async function readTextBody(ctx: Context, limit: number): Promise<string> {
  const charset = /;\s*charset="?([^";\s]+)/i.exec(ctx.get('content-type'))?.[1]?.toLowerCase();
  if (charset && !['utf-8', 'utf8', 'us-ascii', 'ascii'].includes(charset)) {
    throw unsupportedMediaType(`Charset '${charset}' is not supported; send UTF-8.`);
  }
  try {
    return await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined, encoding: 'utf8' });
  } catch (error) {
    const type = (error as { type?: string }).type;
    if (type === 'entity.too.large') throw payloadTooLarge(`The request body is larger than the limit of ${limit} bytes.`);
    if (type === 'request.size.invalid') throw badRequest('The request body is shorter or longer than its Content-Length.');
    if (type === 'request.aborted') throw new GiError('bad_request', 'Bad request', 'The request was aborted while its body was read.');
    throw error;
  }
}
