import { request as httpRequest, type IncomingMessage } from 'node:http';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { request as httpsRequest } from 'node:https';
import type { CallbackResult, CallbackSender } from '@gi/domain';
import { EgressRefused, pinnedLookup, resolveDestination } from './destination';

export interface HttpCallbackSenderOptions {
  /** Private or loopback addresses callbacks may reach nevertheless (local test receivers); empty in production. */
  trustedAddresses: readonly string[];
  /** Time the receiver has to answer (the first byte of its status line) once connected. */
  timeoutMs: number;
  /** Time to open the TCP connection (default: `timeoutMs`). */
  connectTimeoutMs?: number;
}

/** Bytes of an answer read before the connection is dropped: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs callbacks with the egress policy of connector HTTP: only http and https, no credentials in the
 * URL, only public addresses (checked after DNS and pinned for the connection). Redirects are not
 * followed: a 3xx is an answer like any other non-2xx.
 */
export class HttpCallbackSender implements CallbackSender {
  constructor(private readonly options: HttpCallbackSenderOptions) {}

  /**
   * One delivery attempt in a client span of its own trace (a delivery is made later than the run, often
   * by another process), its W3C trace context sent as `traceparent`. Only the host is recorded: a
   * callback URL may hold a secret in its path or query.
   */
  post(target: string, headers: Record<string, string>, body: string): Promise<CallbackResult> {
    const attributes = { 'http.request.method': 'POST', 'server.address': hostOf(target) };
    return trace.getTracer('generic-integration').startActiveSpan('POST callback', { kind: SpanKind.CLIENT, root: true, attributes }, async (span) => {
      const traced = { ...headers };
      propagation.inject(context.active(), traced);
      try {
        const result = await this.send(target, traced, body);
        if (result.kind === 'answered') span.setAttribute('http.response.status_code', result.status);
        else span.setAttribute('error.type', result.kind);
        if (result.kind !== 'answered' || result.status < 200 || result.status > 299) span.setStatus({ code: SpanStatusCode.ERROR });
        return result;
      } finally {
        span.end();
      }
    });
  }

  private async send(target: string, headers: Record<string, string>, body: string): Promise<CallbackResult> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return { kind: 'refused', reason: 'The callback URL is not a valid URL.' };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'refused', reason: `Only http and https callback URLs are allowed, not ${url.protocol}.` };
    if (url.username || url.password) return { kind: 'refused', reason: 'Callback URLs with credentials are not allowed.' };
    let lookup;
    try {
      lookup = pinnedLookup(await resolveDestination(url.hostname, { addresses: this.options.trustedAddresses }));
    } catch (error) {
      if (!(error instanceof EgressRefused)) throw error;
      // A name that does not resolve may resolve later; a private address stays private.
      return /could not be resolved/.test(error.message) ? { kind: 'unreachable', reason: error.message } : { kind: 'refused', reason: error.message };
    }
    const { timeoutMs, connectTimeoutMs = timeoutMs } = this.options;
    return new Promise<CallbackResult>((resolve) => {
      // Two clocks, each a short one: the connection, then the answer once the POST is out. A receiver
      // that never connects or never answers holds a delivery slot no longer than the two.
      const abort = new AbortController();
      let late = `Could not connect within ${connectTimeoutMs} ms.`;
      let clock = setTimeout(() => abort.abort(), connectTimeoutMs);
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup,
        agent: false,
        signal: abort.signal,
      });
      request.on('socket', (socket) =>
        socket.once('connect', () => {
          clearTimeout(clock);
          late = `No answer within ${timeoutMs} ms of connecting.`;
          clock = setTimeout(() => abort.abort(), timeoutMs);
        }),
      );
      request.on('response', (response: IncomingMessage) => {
        clearTimeout(clock);
        resolve({ kind: 'answered', status: response.statusCode ?? 0 });
        // The status is all that counts: the body is read away (up to a limit) only to end the exchange cleanly.
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        response.on('error', () => undefined);
      });
      request.on('error', (error: Error) => {
        clearTimeout(clock);
        resolve({ kind: 'unreachable', reason: error.name === 'AbortError' ? late : `The request failed: ${error.message}` });
      });
      request.end(body);
    });
  }
}

function hostOf(target: string): string {
  try {
    return new URL(target).hostname;
  } catch {
    return '(invalid)';
  }
}
