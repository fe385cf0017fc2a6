import type { ReadFileEncoding } from './read-file-options';

/** Options a connector passed to `Context.GetRawRequestBody` that cannot be used; the message is for the connector. */
export class RawBodyRefused extends Error {}

const ENCODINGS: readonly string[] = ['utf8', 'base64', 'bytes'];

/** The encoding asked of `Context.GetRawRequestBody(options)`: 'utf8' (the default), 'base64' or 'bytes', as `Context.ReadFile` has them. */
export function rawBodyEncoding(options: unknown): ReadFileEncoding {
  if (options === undefined || options === null) return 'utf8';
  if (typeof options !== 'object' || Array.isArray(options)) throw new RawBodyRefused('Context.GetRawRequestBody options must be an object like { encoding }.');
  const { encoding = 'utf8' } = options as Record<string, unknown>;
  if (typeof encoding !== 'string' || !ENCODINGS.includes(encoding)) {
    throw new RawBodyRefused(`Context.GetRawRequestBody encoding must be 'utf8', 'base64' or 'bytes'.`);
  }
  return encoding as ReadFileEncoding;
}

/** The body in the encoding asked for: text as received, its UTF-8 bytes in base64, or those bytes. */
export function encodeRawBody(body: string, encoding: ReadFileEncoding): string | ArrayBuffer {
  if (encoding === 'utf8') return body;
  const bytes = Buffer.from(body, 'utf8');
  if (encoding === 'base64') return bytes.toString('base64');
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
