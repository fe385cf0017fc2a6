import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isAllowedHost } from '@gi/domain';
import type { TraceContext } from '@gi/domain';
import { EgressRefused, pinnedLookup, resolveDestination } from '@gi/egress';
import type { Destination } from '@gi/egress';
import { formatBytes } from './sandbox-options';

/** `Context.Http.Request(...)` as the connector writes it. */
export interface ConnectorHttpRequest {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  timeoutMs?: number;
}

export interface ConnectorHttpResponse {
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
  /** The body parsed, when the response is JSON. */
  json?: unknown;
  /** The URL that answered, after redirects. */
  url: string;
}

/**
 * The response as the host hands it to the sandbox: `json` is made there, from `body`, so the host
 * never parses (or serialises again) data a downstream API chose the shape of.
 */
export interface HostHttpResponse extends Omit<ConnectorHttpResponse, 'json'> {
  /** Whether the body is declared JSON. */
  isJson: boolean;
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

/** A refusal or failure the connector sees as the message of the rejected promise. */
export class ConnectorHttpError extends Error {}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const DROPPED_HEADERS = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'upgrade', 'keep-alive', 'te', 'trailer']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Performs one connector HTTP request: only to allowed hosts, only to public addresses (checked
 * after DNS and pinned for the connection, so a name cannot re-resolve elsewhere), with every
 * redirect checked the same way, within a time and a response size limit. With the run's `trace`
 * context, every hop carries it (`send`).
 */
export async function performHttpRequest(
  input: unknown,
  allowedHosts: readonly string[],
  limits: HttpLimits,
  signal: AbortSignal,
  trace?: TraceContext,
): Promise<HostHttpResponse> {
  const request = validate(input);
  const timeoutMs = Math.min(request.timeoutMs ?? limits.defaultTimeoutMs, limits.defaultTimeoutMs * 10);
  // A timer of our own rather than AbortSignal.timeout: Node holds that signal weakly, and a garbage
  // collection during the request could take its timeout with it.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), timeoutMs);
  const abort = AbortSignal.any([signal, deadline.signal]);
  let url = new URL(request.url);
  let method = request.method;
  let body = request.body;
  try {
    for (let hop = 0; ; hop++) {
      const address = await checkDestination(url, allowedHosts, limits);
      const response = await send(url, method, request.headers, body, address, abort, trace);
      const location = response.headers.location;
      if (!REDIRECTS.has(response.statusCode ?? 0) || !location) return await readResponse(response, url, limits, abort);
      response.resume();
      if (hop >= limits.maxRedirects) throw new ConnectorHttpError(`Too many redirects (more than ${limits.maxRedirects}).`);
      url = new URL(location, url);
      if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
    }
  } catch (error) {
    if (error instanceof ConnectorHttpError) throw error;
    if (abort.aborted && !signal.aborted) throw new ConnectorHttpError(`The request to ${url.host} timed out after ${timeoutMs} ms.`);
    if (signal.aborted) throw new ConnectorHttpError('The request was cancelled because the run ended.');
    throw new ConnectorHttpError(`The request to ${url.host} failed: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

interface ValidRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs?: number;
}

function validate(input: unknown): ValidRequest {
  if (input === null || typeof input !== 'object') throw new ConnectorHttpError('Context.Http.Request expects an object like { method, url, headers, body }.');
  const raw = input as Record<string, unknown>;
  if (typeof raw.url !== 'string' || raw.url === '') throw new ConnectorHttpError('Context.Http.Request needs a url.');
  const method = raw.method === undefined ? 'GET' : String(raw.method).toUpperCase();
  if (!METHODS.has(method)) throw new ConnectorHttpError(`HTTP method '${String(raw.method).slice(0, 20)}' is not supported.`);
  const headers: Record<string, string> = {};
  if (raw.headers !== undefined && raw.headers !== null) {
    if (typeof raw.headers !== 'object') throw new ConnectorHttpError('Context.Http.Request headers must be an object of strings.');
    for (const [name, value] of Object.entries(raw.headers as Record<string, unknown>)) {
      if (!DROPPED_HEADERS.has(name.toLowerCase())) headers[name] = String(value);
    }
  }
  let body: string | undefined;
  if (raw.body !== undefined && raw.body !== null) {
    if (typeof raw.body === 'string') body = raw.body;
    else {
      try {
        body = JSON.stringify(raw.body);
      } catch {
        throw new ConnectorHttpError('The request body cannot be sent as JSON: it nests too deeply.');
      }
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
    }
  }
  let timeoutMs: number | undefined;
  if (raw.timeoutMs !== undefined) {
    timeoutMs = Number(raw.timeoutMs);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new ConnectorHttpError('Context.Http.Request timeoutMs must be a positive number.');
  }
  try {
    new URL(raw.url);
  } catch {
    throw new ConnectorHttpError(`'${raw.url.slice(0, 200)}' is not a valid URL.`);
  }
  return { method, url: raw.url, headers, body, timeoutMs };
}

async function checkDestination(url: URL, allowedHosts: readonly string[], limits: HttpLimits): Promise<Destination> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConnectorHttpError(`Only http and https URLs can be requested, not ${url.protocol}.`);
  if (url.username || url.password) throw new ConnectorHttpError('URLs with credentials are not allowed; send an Authorization header instead.');
  if (!isAllowedHost(url, allowedHosts)) throw new ConnectorHttpError(`The host '${url.host}' is not in this integration's allowed hosts.`);
  try {
    return await resolveDestination(url.hostname, { addresses: limits.trustedAddresses, loopback: limits.trustLoopback });
  } catch (error) {
    if (!(error instanceof EgressRefused)) throw error;
    throw new ConnectorHttpError(error.loopback && limits.loopbackHint ? `${error.message} ${limits.loopbackHint}` : error.message);
  }
}

/**
 * The headers a request goes out with: the connector's, and with tracing on the run's W3C trace context
 * in place of any `traceparent` or `tracestate` the connector set, so a trace cannot be forged into.
 */
function outgoingHeaders(headers: Record<string, string>, trace: TraceContext | undefined): Record<string, string> {
  if (!trace) return { ...headers };
  const own: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (!TRACE_HEADERS.has(name.toLowerCase())) own[name] = value;
  own.traceparent = trace.traceparent;
  if (trace.tracestate) own.tracestate = trace.tracestate;
  return own;
}

const TRACE_HEADERS = new Set(['traceparent', 'tracestate']);

/** The one place a connector's outgoing request is built on the host: every hop of every request goes out here. */
function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  destination: Destination,
  signal: AbortSignal,
  trace: TraceContext | undefined,
): Promise<IncomingMessage> {
  // The connection goes to the address checked above, never to a fresh DNS answer.
  const options: RequestOptions = { method, headers: outgoingHeaders(headers, trace), lookup: pinnedLookup(destination), signal, agent: false };
  if (body !== undefined) (options.headers as Record<string, string>)['Content-Length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function readResponse(response: IncomingMessage, url: URL, limits: HttpLimits, signal: AbortSignal): Promise<HostHttpResponse> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    size += (chunk as Buffer).length;
    if (size > limits.maxResponseBytes) {
      response.destroy();
      throw new ConnectorHttpError(`The response from ${url.host} is larger than the limit of ${formatBytes(limits.maxResponseBytes)}.`);
    }
    chunks.push(chunk as Buffer);
  }
  if (signal.aborted) throw new ConnectorHttpError(`The response from ${url.host} did not arrive in time.`);
  const body = Buffer.concat(chunks).toString('utf8');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const isJson = /^application\/([\w.+-]+\+)?json\b/i.test(headers['content-type'] ?? '');
  return { status: response.statusCode ?? 0, statusText: response.statusMessage ?? '', headers, body, url: url.href, isJson };
}
