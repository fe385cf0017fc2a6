import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { Api } from './api-client';
import { echo } from './connectors';
import { ADMIN_TOKEN, ROOT, startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * The HTTP surface of the built service as a real process (`gi up`): the route-auth matrix in small
 * (every operation of docs/openapi.yaml, which the unit tests hold equal to the registered routes),
 * the body that used to end the process, and the server's slow-client settings read from the
 * environment.
 */

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request with its path sent exactly as given (fetch would normalise dot segments and escapes). */
function raw(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const req = request({ hostname, port, path, method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

type Operation = { method: string; path: string; scheme: 'adminToken' | 'botToken' | null };

function operations(): Operation[] {
  const spec = parse(readFileSync(join(ROOT, 'docs/openapi.yaml'), 'utf8')) as { paths: Record<string, Record<string, { security?: Array<Record<string, unknown>> }>> };
  return Object.entries(spec.paths).flatMap(([path, item]) =>
    ['get', 'put', 'post', 'delete']
      .filter((method) => item[method])
      .map((method) => ({ method: method.toUpperCase(), path, scheme: (Object.keys(item[method].security?.[0] ?? {})[0] ?? null) as Operation['scheme'] })),
  );
}

describe('the HTTP surface of the built service', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const values: Record<string, string> = { botId: 'acme', entityName: 'Order', integrationId: 'echo', tokenId: 'no-such-token', invocationId: 'no-such-invocation', asset: 'js/main.js' };
  const concrete = (path: string) => path.replace(/\{(\w+)\}/g, (_m, name: string) => values[name]);

  beforeAll(async () => {
    service = await startService({ env: { HEADERS_TIMEOUT_SECONDS: '1', BODY_IDLE_TIMEOUT_SECONDS: '1' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'echo', echo);
  });
  afterAll(() => service.dispose());

  it('refuses every protected operation without a token, with a garbage one and with the other kind of token; no-store, never a 5xx', async () => {
    const failures: string[] = [];
    const protectedOperations = operations().filter((operation) => operation.scheme);
    expect(protectedOperations.length).toBeGreaterThan(20);
    for (const { method, path, scheme } of protectedOperations) {
      const wrongKind = scheme === 'adminToken' ? token : ADMIN_TOKEN;
      for (const authorization of [undefined, 'Bearer garbage', `Bearer ${wrongKind}`]) {
        const reply = await raw(service.baseUrl, method, concrete(path), authorization ? { authorization } : {}, method === 'PUT' || method === 'POST' ? '{}' : undefined);
        if (reply.status !== 401 || reply.headers['cache-control'] !== 'no-store') failures.push(`${method} ${path} with ${authorization ?? 'nothing'}: ${reply.status}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('matches no other spelling of a path: /Admin/bots, /admin/bots/, /api/platform/..., /admin//bots, /admin/./bots', async () => {
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    expect((await raw(service.baseUrl, 'GET', '/admin/bots', admin)).status).toBe(200);
    for (const path of ['/Admin/bots', '/ADMIN/bots', '/admin/Bots', '/admin/bots/', '/%61dmin/bots', '/admin//bots', '//admin/bots', '/admin/./bots', '/x/../admin/bots']) {
      for (const headers of [{}, admin]) {
        const reply = await raw(service.baseUrl, 'GET', path, headers);
        expect([path, reply.status, reply.headers['cache-control']]).toEqual([path, 404, 'no-store']);
      }
    }
    const webhook = `/api/platform/acme/Order/echo/GenericIntegration`;
    expect((await raw(service.baseUrl, 'POST', webhook, { authorization: `Bearer ${token}` }, '{}')).status).toBe(404);
  });

  it("answers the 8 KB body that used to end the process with 400, and goes on serving", async () => {
    const deep = '['.repeat(4000) + ']'.repeat(4000);
    const reply = await api.call(api.webhookUrl('acme', 'Order', 'echo'), token, { body: deep, headers: { 'content-type': 'application/json' } });
    expect([reply.status, reply.json.type, reply.json.maxJsonDepth]).toEqual([400, 'urn:gi:problem:bad-request', 64]);
    const next = await api.postJson(api.webhookUrl('acme', 'Order', 'echo'), token, { orderId: 1 });
    expect([next.status, next.json.body]).toEqual([200, { orderId: 1 }]);
  });

  it('closes a connection whose headers do not arrive within HEADERS_TIMEOUT_SECONDS with a 408 problem', async () => {
    const { port } = new URL(service.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const started = Date.now();
    socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => socket.write('X-Slow: 1\r\n'), 300);
    await new Promise((resolve) => socket.once('close', resolve));
    clearInterval(trickle);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    expect(received).toContain('urn:gi:problem:request-timeout');
  });

  it('answers a body that stops arriving with 408 once BODY_IDLE_TIMEOUT_SECONDS passed, and closes', async () => {
    const { port } = new URL(service.baseUrl);
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    const started = Date.now();
    socket.write(`POST /api/Platform/acme/Order/echo/GenericIntegration HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`);
    await new Promise((resolve) => socket.once('close', resolve));
    expect(Date.now() - started).toBeLessThan(4000);
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
  });
});
