import { MAX_UNITS_PER_CALL, tooLarge } from '../../guest/internal/limits';
import { HttpExchangeError, httpCallerOf, sendHttp } from '../http/http-exchange';
import { SandboxError, type GlobalsModule, type HostRun } from './host-module';

/** A request of the run in flight, or its response waiting for the sandbox to take its body. */
interface Exchange {
  abort: AbortController;
  body?: Uint8Array;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);
const REDIRECT_MODES = new Set(['follow', 'manual', 'error']);
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * `fetch` and its classes: the host sends each request with `sendHttp` (http/http-exchange.ts), the rules
 * `Context.Http.Request` obeys too, and keeps the response's body until the sandbox takes it. Both
 * are the run's own (`run.local`), aborted and dropped when it ends.
 */
export const fetchModule: GlobalsModule = {
  name: 'fetch',
  globals: ['fetch', 'Request', 'Response', 'Headers', 'Blob', 'File', 'FormData'],
  requires: ['url', 'events'],
  functions: {
    send(run, wire, body, id) {
      if (typeof id !== 'number' || (body !== undefined && !(body instanceof Uint8Array))) throw new SandboxError('TypeError', 'fetch: invalid arguments.');
      const request = parseWire(wire);
      const exchanges = exchangesOf(run);
      if (exchanges.has(id)) throw new SandboxError('TypeError', 'fetch: invalid arguments.');
      const exchange: Exchange = { abort: new AbortController() };
      exchanges.set(id, exchange);
      return sendHttp({ ...request, body, signal: exchange.abort.signal }, httpCallerOf(run)).then(
        (reply) => {
          // Its own buffer, exactly its size: a pooled Buffer would hand the sandbox bytes beside it.
          exchange.body = new Uint8Array(reply.body);
          // A response's URL leaves out the fragment (WHATWG Fetch).
          const url = reply.url.replace(/#.*$/s, '');
          return JSON.stringify({ status: reply.status, statusText: reply.statusText, headers: reply.headers, url, redirected: reply.redirected });
        },
        (error: unknown) => {
          exchanges.delete(id);
          throw new SandboxError('TypeError', error instanceof HttpExchangeError ? error.message : 'fetch failed.');
        },
      );
    },
    take(run, id) {
      const exchanges = exchangesOf(run);
      const body = exchanges.get(id as number)?.body;
      if (body === undefined) throw new SandboxError('TypeError', 'fetch: no such response.');
      exchanges.delete(id as number);
      return body;
    },
    abort(run, id) {
      const exchanges = exchangesOf(run);
      exchanges.get(id as number)?.abort.abort();
      exchanges.delete(id as number);
    },
    encode(_run, text) {
      if (typeof text !== 'string') throw new SandboxError('TypeError', 'A string is expected.');
      if (text.length > MAX_UNITS_PER_CALL) throw new SandboxError('RangeError', tooLarge('A body', 'characters', 'send less'));
      return utf8.encode(text);
    },
    decode(_run, bytes) {
      if (!(bytes instanceof Uint8Array)) throw new SandboxError('TypeError', 'Bytes are expected.');
      if (bytes.byteLength > MAX_UNITS_PER_CALL) throw new SandboxError('RangeError', tooLarge('A body', 'bytes', 'read less'));
      return utf8Decoder.decode(bytes);
    },
    multipart(_run, bytes, contentType) {
      if (!(bytes instanceof Uint8Array) || typeof contentType !== 'string') throw new SandboxError('TypeError', 'Bytes and a content type are expected.');
      return JSON.stringify(parseMultipart(bytes, contentType));
    },
  },
};

const exchangesOf = (run: HostRun) => run.local('fetch.exchanges', () => new Map<number, Exchange>());

interface WireRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  redirect: 'follow' | 'manual' | 'error';
}

/** The request as the sandbox described it, checked again: connector code can call this with anything. */
function parseWire(wire: unknown): WireRequest {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(typeof wire === 'string' ? wire : 'null') as Record<string, unknown>;
  } catch {
    value = {};
  }
  const invalid = () => new SandboxError('TypeError', 'fetch: invalid request.');
  if (value === null || typeof value !== 'object') throw invalid();
  const { method, url, headers, redirect } = value;
  if (typeof method !== 'string' || !TOKEN.test(method) || FORBIDDEN_METHODS.has(method.toUpperCase())) throw invalid();
  if (typeof url !== 'string' || typeof redirect !== 'string' || !REDIRECT_MODES.has(redirect)) throw invalid();
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) throw invalid();
  const checked: Record<string, string> = {};
  for (const [name, text] of Object.entries(headers)) {
    // Latin-1 without NUL, CR or LF: what a header line can carry.
    if (!TOKEN.test(name) || typeof text !== 'string' || /[^\t\x20-\x7e\x80-\xff]/.test(text)) throw new SandboxError('TypeError', `fetch: the header '${name.slice(0, 100)}' is not valid.`);
    checked[name] = text;
  }
  return { method, url, headers: checked, redirect: redirect as WireRequest['redirect'] };
}

/** A part of a multipart/form-data body: its name, its file name and type for a file, and where its bytes are. */
export interface MultipartPart {
  name: string;
  filename?: string;
  type?: string;
  start: number;
  end: number;
}

/** The parts of a multipart/form-data body (RFC 7578), by offsets into it; a TypeError when it is not one. */
export function parseMultipart(bytes: Uint8Array, contentType: string): MultipartPart[] {
  const invalid = (why: string) => new SandboxError('TypeError', `The body cannot be read as multipart/form-data: ${why}.`);
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (!boundary) throw invalid('its Content-Type names no boundary');
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const next = Buffer.from(`\r\n${delimiter.toString('latin1')}`, 'latin1');
  let at = body.indexOf(delimiter);
  if (at === -1) throw invalid('no boundary was found');
  const parts: MultipartPart[] = [];
  for (;;) {
    at += delimiter.length;
    if (body[at] === 0x2d && body[at + 1] === 0x2d) return parts;
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd === -1) throw invalid('a part is cut short');
    const headStart = lineEnd + 2;
    const headEnd = body.subarray(headStart, headStart + 2).toString('latin1') === '\r\n' ? headStart : body.indexOf('\r\n\r\n', headStart);
    if (headEnd === -1) throw invalid("a part's headers do not end");
    const start = headEnd === headStart ? headStart + 2 : headEnd + 4;
    const end = body.indexOf(next, start);
    if (end === -1) throw invalid('the closing boundary is missing');
    const headers = new Map<string, string>();
    for (const line of body.toString('utf8', headStart, headEnd).split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const disposition = headers.get('content-disposition') ?? '';
    const name = parameter(disposition, 'name');
    if (!/^form-data\b/i.test(disposition) || name === undefined) throw invalid('a part has no Content-Disposition: form-data with a name');
    const filename = parameter(disposition, 'filename');
    parts.push(filename === undefined ? { name, start, end } : { name, filename, type: headers.get('content-type') ?? 'text/plain', start, end });
    at = end + 2;
  }
}

/** A parameter of a Content-Disposition header, quoted or not; the escapes of HTML's encoding undone. */
function parameter(header: string, key: string): string | undefined {
  const found = new RegExp(`;\\s*${key}=(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(header);
  if (!found) return undefined;
  const value = found[1] ?? found[2];
  return value.replace(/%0A/gi, '\n').replace(/%0D/gi, '\r').replace(/%22/gi, '"').replace(/\\(.)/g, '$1');
}
