import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacAlgorithm } from '@gi/domain';

/** An HMAC over the parts in order: text as UTF-8, bytes as they are. */
export function hmac(algorithm: HmacAlgorithm, key: Buffer, ...parts: Array<string | Buffer>): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

export const sha256 = (bytes: Buffer | string): Buffer => createHash('sha256').update(bytes).digest();

/**
 * Whether two byte strings are equal, in time that depends on their length only: an expected MAC has a
 * public, fixed length, so a length that differs is no secret.
 */
export const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/** Whether two secrets of any length are equal, in constant time: their SHA-256 digests are compared. */
export const sameSecret = (a: Buffer | string, b: Buffer | string): boolean => timingSafeEqual(sha256(a), sha256(b));

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of hex or (padded, standard) base64 text; null when the text is not exactly that. */
export function decodeSignature(text: string, encoding: 'hex' | 'base64'): Buffer | null {
  if (text.length === 0) return null;
  if (encoding === 'hex') return HEX.test(text) ? Buffer.from(text, 'hex') : null;
  return BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}
