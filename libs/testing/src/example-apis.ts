import { createHmac, generateKeyPairSync, timingSafeEqual, verify as verifySignature, type KeyPairKeyObjectResult } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** The code of an example connector (examples/connectors/<name>). */
export const exampleConnector = (name: string): string => readFileSync(join(__dirname, '../../../examples/connectors', name), 'utf8');

/** The credentials the example connectors carry as placeholders, and what the stand-in API checks. */
export const EXAMPLE_CREDENTIALS = {
  basic: `Basic ${Buffer.from('acme:change-me').toString('base64')}`,
  signingKey: 'change-me-too',
  webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  serviceAccount: 'connector@acme.example.com',
} as const;

/** The key for service-account.js, made on first use: its private half replaces the placeholder, the stand-in checks with the other. */
let serviceKey: KeyPairKeyObjectResult | undefined;
const serviceAccountKey = () => (serviceKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }));

/** service-account.js with a real key in place of its placeholder. */
export const serviceAccountConnector = (): string =>
  exampleConnector('service-account.js').replace(
    '"REPLACE_WITH_THE_SERVICE_ACCOUNT_PRIVATE_KEY"',
    JSON.stringify(serviceAccountKey().privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
  );

/** The Standard Webhooks headers a producer sends with `body`, signed with `secret` (whsec_ + base64). */
export function standardWebhookHeaders(body: string, secret: string = EXAMPLE_CREDENTIALS.webhookSecret, at = Math.floor(Date.now() / 1000)) {
  const id = `msg_${at}`;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${at}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(at), 'webhook-signature': `v1,${signature}` };
}

/** One call the stand-in API received. */
export interface ReceivedCall {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export interface ExampleApi {
  /** http://127.0.0.1:<port> */
  base: string;
  calls: ReceivedCall[];
  /** Answers the next `count` calls of POST /messages with 429 and this Retry-After. */
  throttle(count: number, retryAfter: string): void;
  /**
   * The messages the provider took, by recipient: a POST /messages whose Idempotency-Key it saw before
   * answers as the first did and is not sent again (as real providers do).
   */
  sent: Map<string, number>;
  /** POST /messages calls answered from an Idempotency-Key seen before. */
  deduplicated: number;
  close(): Promise<void>;
}

/**
 * The downstream APIs the example connectors call, on 127.0.0.1: a message provider (POST /messages,
 * 429 when throttled, a repeat of an Idempotency-Key answered as before and not sent again), an order API (POST /v1/orders: Basic auth and an HMAC signature of timestamp and
 * body, or a bearer token it issued) and an OAuth token endpoint (POST /token: an RS256 JWT bearer
 * assertion of the service account).
 */
export async function startExampleApi(): Promise<ExampleApi> {
  const calls: ReceivedCall[] = [];
  const issued = new Set<string>();
  let throttled = 0;
  let retryAfter = '1';
  let messages = 0;
  const sent = new Map<string, number>();
  const byKey = new Map<string, unknown>();
  const api = { deduplicated: 0 };

  const reply = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const handle = (req: IncomingMessage, res: ServerResponse, call: ReceivedCall) => {
    if (call.method === 'POST' && call.path === '/messages') {
      if (throttled > 0) {
        throttled--;
        return reply(res, 429, { error: 'slow down' }, { 'retry-after': retryAfter });
      }
      const key = call.headers['idempotency-key'];
      const known = typeof key === 'string' ? byKey.get(key) : undefined;
      if (known) {
        api.deduplicated++;
        return reply(res, 202, known);
      }
      const { to } = JSON.parse(call.body) as { to: string };
      const answer = { id: `m-${++messages}`, to };
      if (typeof key === 'string') byKey.set(key, answer);
      sent.set(to, (sent.get(to) ?? 0) + 1);
      return reply(res, 202, answer);
    }
    if (call.method === 'POST' && call.path === '/token') {
      const form = new URLSearchParams(call.body);
      const ok = form.get('grant_type') === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && validAssertion(form.get('assertion') ?? '', `${base}/token`);
      if (!ok) return reply(res, 401, { error: 'invalid_grant' });
      const token = `at-${issued.size + 1}`;
      issued.add(token);
      return reply(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
    }
    if (call.method === 'POST' && call.path.startsWith('/v1/orders')) {
      const bearer = /^Bearer (.+)$/.exec(call.headers.authorization ?? '')?.[1];
      if (bearer !== undefined ? !issued.has(bearer) : !validSignedCall(call)) return reply(res, 401, { error: 'unauthorized' });
      return reply(res, 201, { reference: `R-${calls.length}`, received: JSON.parse(call.body) });
    }
    reply(res, 404, { error: 'no such route' });
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const call = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      calls.push(call);
      handle(req, res, call);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    calls,
    sent,
    get deduplicated() {
      return api.deduplicated;
    },
    throttle(count, after) {
      throttled = count;
      retryAfter = after;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Basic auth of the example credentials, and X-Signature = hex HMAC-SHA256 of `${X-Timestamp}.${body}`. */
function validSignedCall(call: ReceivedCall): boolean {
  const timestamp = String(call.headers['x-timestamp'] ?? '');
  const expected = createHmac('sha256', EXAMPLE_CREDENTIALS.signingKey).update(`${timestamp}.${call.body}`).digest();
  const given = Buffer.from(String(call.headers['x-signature'] ?? ''), 'hex');
  const fresh = Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
  return call.headers.authorization === EXAMPLE_CREDENTIALS.basic && fresh && given.length === expected.length && timingSafeEqual(given, expected);
}

/** An RS256 JWT signed by the service account's key, for this audience, not expired. */
function validAssertion(jwt: string, audience: string): boolean {
  const [header, claims, signature] = jwt.split('.');
  if (!header || !claims || !signature) return false;
  if (!verifySignature('sha256', Buffer.from(`${header}.${claims}`), serviceAccountKey().publicKey, Buffer.from(signature, 'base64url'))) return false;
  const { alg } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg?: string };
  const { iss, aud, exp } = JSON.parse(Buffer.from(claims, 'base64url').toString()) as { iss?: string; aud?: string; exp?: number };
  return alg === 'RS256' && iss === EXAMPLE_CREDENTIALS.serviceAccount && aud === audience && (exp ?? 0) > Date.now() / 1000;
}
