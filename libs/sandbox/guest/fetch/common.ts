/** What the parts of the fetch module share: wire types, constants, built-ins as they were, bytes. */
import { byteRange, setBytes, typedArrayBuffer, typedArrayElements, typedArrayOffset } from '../internal/bytes';
import { uncurry } from '../internal/primordials';
import { domString } from '../internal/webidl';

export { byteRange, typedArrayElements };

/** A header list: lower-case names and values, in order. */
export type HeaderList = Array<[string, string]>;
/** Whether a Headers object may change. */
export type Guard = 'none' | 'immutable';
/** A FormData entry: a name and a string or File. */
export type Entry = [string, string | object];

export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
export const INVALID_VALUE = /[\0\r\n]/;
export const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
export const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];
export const NORMALIZED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
export const REDIRECT_MODES = ['follow', 'manual', 'error'];
export const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
export const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
/** The most a request body may hold (RUN_BUDGET.httpRequestBytes); the host checks it again. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
export const TEXT_TYPE = 'text/plain;charset=UTF-8';
export const FORM_TYPE = 'application/x-www-form-urlencoded;charset=UTF-8';

export const { parse, stringify } = JSON;
export const { random, floor } = Math;
export const { setPrototypeOf, getOwnPropertyNames, getOwnPropertyDescriptor, defineProperty, create } = Object;
export const test = uncurry(RegExp.prototype.test);
export const replace = uncurry(String.prototype.replace as (pattern: RegExp, replacement: string) => string);
export const toLowerCase = uncurry(String.prototype.toLowerCase);
export const toUpperCase = uncurry(String.prototype.toUpperCase);
export const charCodeAt = uncurry(String.prototype.charCodeAt);
export const push = uncurry(Array.prototype.push as (...items: unknown[]) => number);
export const splice = uncurry(Array.prototype.splice as (start: number, count: number) => unknown[]);
export const sort = uncurry(Array.prototype.sort as (compare: (a: unknown, b: unknown) => number) => unknown[]);
export const includes = uncurry(Array.prototype.includes as (value: unknown) => boolean);
export const then = uncurry(Promise.prototype.then as (onFulfilled: (value: unknown) => unknown, onRejected: (reason: unknown) => unknown) => Promise<unknown>);
export const sliceBuffer = uncurry(ArrayBuffer.prototype.slice);
export const iteratorOf = (value: unknown): Iterator<unknown> | null => {
  const method = (value as Record<symbol, unknown>)[Symbol.iterator];
  if (method === undefined || method === null) return null;
  if (typeof method !== 'function') throw new TypeError('The value is not iterable.');
  return (method as () => Iterator<unknown>).call(value);
};
export const isObject = (value: unknown): value is object => (typeof value === 'object' && value !== null) || typeof value === 'function';

/** A copy of some bytes, in a buffer of their own. */
export function copyBytes(bytes: Uint8Array, start = 0, end = typedArrayElements(bytes)): Uint8Array {
  const copy = new Uint8Array(end - start);
  if (end > start) setBytes(copy, new Uint8Array(typedArrayBuffer(bytes), typedArrayOffset(bytes) + start, end - start));
  return copy;
}

/** An ArrayBuffer of exactly these bytes (the one they are in when they fill it, else a copy). */
export function bufferOf(bytes: Uint8Array): ArrayBuffer {
  const buffer = typedArrayBuffer(bytes) as ArrayBuffer;
  const offset = typedArrayOffset(bytes);
  const length = typedArrayElements(bytes);
  return offset === 0 && length === buffer.byteLength ? buffer : sliceBuffer(buffer, offset, offset + length);
}

export function concatBytes(parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (let i = 0; i < parts.length; i++) size += typedArrayElements(parts[i]);
  const joined = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    setBytes(joined, parts[i], at);
    at += typedArrayElements(parts[i]);
  }
  return joined;
}

/** WebIDL ByteString: code units above 0xFF are a TypeError. */
export function byteString(value: unknown): string {
  const text = domString(value);
  for (let i = 0; i < text.length; i++) if (charCodeAt(text, i) > 0xff) throw new TypeError(`A header value may hold only Latin-1 characters (found U+${charCodeAt(text, i).toString(16).toUpperCase()}).`);
  return text;
}

