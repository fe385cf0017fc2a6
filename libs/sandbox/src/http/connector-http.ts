import { HttpExchangeError, sendHttp, type HttpCaller } from './http-exchange';

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

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Performs one `Context.Http.Request`: the request checked and sent by `sendHttp` (http-exchange.ts,
 * the rules `fetch` obeys too), redirects followed, the body answered as UTF-8 text.
 */
export async function performHttpRequest(input: unknown, caller: HttpCaller): Promise<HostHttpResponse> {
  const request = validate(input);
  const reply = await sendHttp({ ...request, body: request.body === undefined ? undefined : Buffer.from(request.body), redirect: 'follow' }, caller);
  const headers: Record<string, string> = {};
  for (const [name, value] of reply.headers) headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  const isJson = /^application\/([\w.+-]+\+)?json\b/i.test(headers['content-type'] ?? '');
  return { status: reply.status, statusText: reply.statusText, headers, body: reply.body.toString('utf8'), url: reply.url, isJson };
}

interface ValidRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs?: number;
}

function validate(input: unknown): ValidRequest {
  if (input === null || typeof input !== 'object') throw new HttpExchangeError('Context.Http.Request expects an object like { method, url, headers, body }.');
  const raw = input as Record<string, unknown>;
  if (typeof raw.url !== 'string' || raw.url === '') throw new HttpExchangeError('Context.Http.Request needs a url.');
  const method = raw.method === undefined ? 'GET' : String(raw.method).toUpperCase();
  if (!METHODS.has(method)) throw new HttpExchangeError(`HTTP method '${String(raw.method).slice(0, 20)}' is not supported.`);
  const headers: Record<string, string> = {};
  if (raw.headers !== undefined && raw.headers !== null) {
    if (typeof raw.headers !== 'object') throw new HttpExchangeError('Context.Http.Request headers must be an object of strings.');
    for (const [name, value] of Object.entries(raw.headers as Record<string, unknown>)) headers[name] = String(value);
  }
  let body: string | undefined;
  if (raw.body !== undefined && raw.body !== null) {
    if (typeof raw.body === 'string') body = raw.body;
    else {
      try {
        body = JSON.stringify(raw.body);
      } catch {
        throw new HttpExchangeError('The request body cannot be sent as JSON: it nests too deeply.');
      }
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
    }
  }
  let timeoutMs: number | undefined;
  if (raw.timeoutMs !== undefined) {
    timeoutMs = Number(raw.timeoutMs);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new HttpExchangeError('Context.Http.Request timeoutMs must be a positive number.');
  }
  try {
    new URL(raw.url);
  } catch {
    throw new HttpExchangeError(`'${raw.url.slice(0, 200)}' is not a valid URL.`);
  }
  return { method, url: raw.url, headers, body, timeoutMs };
}
