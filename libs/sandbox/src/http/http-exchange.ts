import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { constants as zlib, createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { isAllowedHost } from '@gi/domain';
import type { TraceContext } from '@gi/domain';
import { EgressRefused, pinnedLookup, resolveDestination, type Destination, type ResolveHost } from '@gi/egress';
import type { HostRun } from '../host/host-module';
import { RUN_BUDGET } from '../run/run-budget';
import { formatBytes } from '../sandbox-options';

/**
 * The one way connector code reaches the network, for `Context.Http.Request` and `fetch` alike: only
 * to the integration's allowed hosts, only to public addresses (checked after DNS and pinned for the
 * connection, so a name cannot re-resolve elsewhere), every redirect checked the same way, within the
 * run's budget of host calls, a time limit and a response size limit (counted on the decompressed
 * bytes), and cancelled when the run ends.
 */

/** One request as a connector asked for it. */
export interface HttpExchange {
  /** An HTTP token (checked by the caller), as it goes on the wire. */
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** What a redirect does: followed (checked like the first URL), returned as it is, or an error. */
  redirect: 'follow' | 'manual' | 'error';
  /** At most ten times the default (`HttpLimits.defaultTimeoutMs`). */
  timeoutMs?: number;
  /** Aborts this exchange alone (a fetch's signal); the run's end aborts every one. */
  signal?: AbortSignal;
}

/** The response, its body read whole (and decompressed). */
export interface HttpReply {
  status: number;
  statusText: string;
  /** Names in lower case, in the order received; repeated headers (set-cookie) stay apart. */
  headers: Array<[string, string]>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  redirected: boolean;
}

export interface HttpLimits {
  maxResponseBytes: number;
  defaultTimeoutMs: number;
  maxRedirects: number;
  /** Addresses treated as public although they are not (local test servers); empty in production. */
  trustedAddresses: readonly string[];
  /** Every loopback address treated as public (local runs against a mock API); false in production. */
  trustLoopback: boolean;
  /** Added to the refusal of a loopback address ('' for none). */
  loopbackHint: string;
}

/** Who sends: the run's allowed hosts and limits, its end, and its budget of host calls. */
export interface HttpCaller {
  allowedHosts: readonly string[];
  /** Every request is refused with this message when set. */
  blockedHttp?: string;
  limits: HttpLimits;
  /** Aborted when the run ends. */
  signal: AbortSignal;
  /** Resolves once the run's rate of host calls lets one more start (RUN_BUDGET.hostCallsPerSecond). */
  turn(): Promise<void>;
  /** The DNS resolver (tests give their own); the system's by default. */
  resolve?: ResolveHost;
  /** The run's W3C trace context while tracing is on: every hop carries it (see `outgoingHeaders`). */
  trace?: TraceContext;
}

/** A refusal or failure; the message says why and is safe to show the connector. */
export class HttpExchangeError extends Error {}

/** The Fetch standard's cap on redirects; the operator's `http.maxRedirects` may set fewer. */
export const MAX_REDIRECTS = 20;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Set by the transport, never by the connector. */
const DROPPED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'upgrade', 'keep-alive', 'te', 'trailer', 'expect']);
/** Dropped when a redirect leads to another origin, as browsers do: credentials meant for the first. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization']);
/** Dropped when a redirect turns the request into a GET without body. */
const BODY_HEADERS = new Set(['content-type', 'content-encoding', 'content-language', 'content-location']);
const ACCEPT_ENCODING = 'gzip, deflate, br';
/** Statuses whose responses have no body whatever their headers say. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The caller for a run: its allowed hosts, the sandbox's HTTP limits, its end and its host-call budget. */
export const httpCallerOf = (run: HostRun): HttpCaller => ({
  allowedHosts: run.input.allowedHosts,
  blockedHttp: run.input.blockedHttp,
  limits: run.env.http,
  signal: run.signal,
  turn: () => run.nextTurn(),
  trace: run.input.trace,
});

export async function sendHttp(exchange: HttpExchange, caller: HttpCaller): Promise<HttpReply> {
  const { limits } = caller;
  let url = parseUrl(exchange.url);
  const size = exchange.body?.byteLength ?? 0;
  if (size > RUN_BUDGET.httpRequestBytes) throw new HttpExchangeError(`The request body (${formatBytes(size)}) is larger than ${formatBytes(RUN_BUDGET.httpRequestBytes)}, the most one request may send.`);
  await caller.turn();
  const timeoutMs = Math.min(exchange.timeoutMs ?? limits.defaultTimeoutMs, limits.defaultTimeoutMs * 10);
  // A timer of our own rather than AbortSignal.timeout: Node holds that signal weakly, and a garbage
  // collection during the request could take its timeout with it.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const abort = AbortSignal.any(exchange.signal ? [caller.signal, deadline.signal, exchange.signal] : [caller.signal, deadline.signal]);
  const maxRedirects = Math.min(limits.maxRedirects, MAX_REDIRECTS);
  let { method, body } = exchange;
  const headers = outgoingHeaders(exchange.headers, caller.trace);
  try {
    for (let hop = 0; ; hop++) {
      if (abort.aborted) throw new Error('aborted');
      const destination = await checkDestination(url, caller);
      const response = await send(url, method, headers, body, destination, abort);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (!REDIRECTS.has(status) || location === undefined || exchange.redirect === 'manual') {
        return await readReply(response, url, hop > 0, method, limits, abort);
      }
      response.destroy();
      if (exchange.redirect === 'error') throw new HttpExchangeError(`${url.host} answered with a redirect (${status}), and the request's redirect mode is 'error'.`);
      if (hop >= maxRedirects) throw new HttpExchangeError(`Too many redirects (more than ${maxRedirects}).`);
      const next = parseUrl(location, url);
      if (next.origin !== url.origin) dropHeaders(headers, CREDENTIAL_HEADERS);
      if ((status === 303 && method !== 'GET' && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
        dropHeaders(headers, BODY_HEADERS);
      }
      url = next;
    }
  } catch (error) {
    if (error instanceof HttpExchangeError) throw error;
    if (caller.signal.aborted) throw new HttpExchangeError('The request was cancelled because the run ended.');
    if (exchange.signal?.aborted) throw new HttpExchangeError('The request was aborted.');
    if (deadline.signal.aborted) throw new HttpExchangeError(`The request to ${url.host} timed out after ${timeoutMs} ms.`);
    throw new HttpExchangeError(`The request to ${url.host} failed: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

function parseUrl(text: string, base?: URL): URL {
  try {
    return new URL(text, base);
  } catch {
    throw new HttpExchangeError(base ? `${base.host} redirected to '${text.slice(0, 200)}', which is not a valid URL.` : `'${text.slice(0, 200)}' is not a valid URL.`);
  }
}

/**
 * The headers to send: what the transport sets dropped, `Accept-Encoding` added unless the connector
 * set its own, and with tracing on the run's W3C trace context in place of any `traceparent` or
 * `tracestate` the connector set, so a trace cannot be forged into.
 */
function outgoingHeaders(given: Record<string, string>, trace: TraceContext | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  let acceptEncoding = false;
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (DROPPED_HEADERS.has(lower) || (trace && TRACE_HEADERS.has(lower))) continue;
    if (lower === 'accept-encoding') acceptEncoding = true;
    headers[name] = value;
  }
  if (!acceptEncoding) headers['Accept-Encoding'] = ACCEPT_ENCODING;
  if (trace) {
    headers.traceparent = trace.traceparent;
    if (trace.tracestate) headers.tracestate = trace.tracestate;
  }
  return headers;
}

const TRACE_HEADERS = new Set(['traceparent', 'tracestate']);

function dropHeaders(headers: Record<string, string>, names: ReadonlySet<string>): void {
  for (const name of Object.keys(headers)) if (names.has(name.toLowerCase())) delete headers[name];
}

async function checkDestination(url: URL, caller: HttpCaller): Promise<Destination> {
  if (caller.blockedHttp !== undefined) throw new HttpExchangeError(caller.blockedHttp);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new HttpExchangeError(`Only http and https URLs can be requested, not ${url.protocol}.`);
  if (url.username || url.password) throw new HttpExchangeError('URLs with credentials are not allowed; send an Authorization header instead.');
  if (!isAllowedHost(url, caller.allowedHosts)) throw new HttpExchangeError(`The host '${url.host}' is not in this integration's allowed hosts.`);
  try {
    return await resolveDestination(url.hostname, { addresses: caller.limits.trustedAddresses, loopback: caller.limits.trustLoopback }, caller.resolve);
  } catch (error) {
    if (!(error instanceof EgressRefused)) throw error;
    const { loopbackHint } = caller.limits;
    throw new HttpExchangeError(error.loopback && loopbackHint ? `${error.message} ${loopbackHint}` : error.message);
  }
}

/** How long a connection kept between requests stays open unused: less than the 5 s after which Node's servers close one. */
export const KEPT_CONNECTION_IDLE_MS = 4000;
const keepAlive = { keepAlive: true, scheduling: 'lifo', timeout: KEPT_CONNECTION_IDLE_MS, maxFreeSockets: 64 } as const;
/**
 * Connections are kept between the requests (and runs) of this thread, by host and port: a new TCP
 * (and TLS) connection for every request cost about a third of the CPU of a connector that forwards
 * each call. A kept connection leads to an address the egress check passed when it was opened, for
 * that same host and port, and every request still checks its own destination before it is sent.
 */
const agents = { 'http:': new HttpAgent(keepAlive), 'https:': new HttpsAgent(keepAlive) };
/** Methods a request may be sent again for when a kept connection turns out closed under it (RFC 9110 9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

function send(url: URL, method: string, headers: Record<string, string>, body: Uint8Array | undefined, destination: Destination, signal: AbortSignal, retried = false): Promise<IncomingMessage> {
  // The connection goes to the address checked above, never to a fresh DNS answer.
  const options: RequestOptions = { method, headers: { ...headers }, lookup: pinnedLookup(destination), signal, agent: agents[url.protocol as keyof typeof agents] ?? false };
  if (body !== undefined) (options.headers as Record<string, string>)['Content-Length'] = String(body.byteLength);
  return new Promise((resolve, reject) => {
    const req: ClientRequest = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, resolve);
    req.on('error', (error: NodeJS.ErrnoException) => {
      // The server closed a kept connection as the request went out: it never got the request.
      if (req.reusedSocket && !retried && IDEMPOTENT.has(method) && (error.code === 'ECONNRESET' || error.code === 'EPIPE') && !signal.aborted) {
        resolve(send(url, method, headers, body, destination, signal, true));
      } else reject(error);
    });
    req.end(body);
  });
}

/** A decompressing stream for the body's Content-Encoding, as browsers decode it; null when it is sent as it is. */
function decoderFor(encoding: string | undefined): NodeJS.ReadWriteStream | null {
  // Lenient about a stream cut short at its end, as browsers are.
  const options = { flush: zlib.Z_SYNC_FLUSH, finishFlush: zlib.Z_SYNC_FLUSH };
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip(options);
    case 'deflate':
      return createInflate(options);
    case 'br':
      return createBrotliDecompress({ flush: zlib.BROTLI_OPERATION_FLUSH, finishFlush: zlib.BROTLI_OPERATION_FLUSH });
    default:
      return null;
  }
}

/**
 * The body, read whole: no more than the limit, of the bytes received and of the bytes they
 * decompress to (a small body that inflates to gigabytes stops at the limit, chunk by chunk).
 */
async function readReply(response: IncomingMessage, url: URL, redirected: boolean, method: string, limits: HttpLimits, signal: AbortSignal): Promise<HttpReply> {
  const max = limits.maxResponseBytes;
  const tooLarge = () => new HttpExchangeError(`The response from ${url.host} is larger than the limit of ${formatBytes(max)}.`);
  const status = response.statusCode ?? 0;
  const decoder = method === 'HEAD' || NULL_BODY.has(status) ? null : decoderFor(response.headers['content-encoding']);
  let source: Readable = response;
  let failure: Error | null = null;
  if (decoder) {
    let received = 0;
    response.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > max) response.destroy((failure = tooLarge()));
    });
    source = pipeline(response, decoder, () => {}) as unknown as Readable;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      size += (chunk as Buffer).length;
      if (size > max) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    response.destroy();
    if (error instanceof HttpExchangeError) throw error;
    if (failure) throw failure;
    if (decoder && !signal.aborted) throw new HttpExchangeError(`The response from ${url.host} could not be decompressed (${response.headers['content-encoding']}).`);
    throw error;
  }
  // Aborted as the last bytes came: the caller tells the run's end, the deadline and a fetch's signal apart.
  if (signal.aborted) throw new Error('aborted');
  const headers: Array<[string, string]> = [];
  const raw = response.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.push([raw[i].toLowerCase(), raw[i + 1]]);
  return { status, statusText: response.statusMessage ?? '', headers, body: Buffer.concat(chunks, size), url: url.href, redirected };
}
