import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Cancellation } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

/** A local downstream API; `hits` counts every request that reached it. */
function startServer(): Promise<{ server: Server; base: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname === '/json') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ hello: 'world' }));
      } else if (url.pathname === '/echo') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ method: req.method, contentType: req.headers['content-type'], token: req.headers['x-token'], authorization: req.headers.authorization, body }));
      } else if (url.pathname === '/gzip') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ zipped: true })));
      } else if (url.pathname === '/trace') {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ traceparent: req.headers.traceparent ?? null, tracestate: req.headers.tracestate ?? null }));
      } else if (url.pathname === '/redirect') {
        res.writeHead(302, { Location: url.searchParams.get('to') ?? '/json' });
        res.end();
      } else if (url.pathname === '/big') {
        res.end('x'.repeat(10_000));
      } else if (url.pathname === '/slow') {
        setTimeout(() => res.end('late'), 2000).unref();
      } else {
        res.writeHead(404);
        res.end('no such page');
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits })),
  );
}

describe('Context.Http.Request', () => {
  let local: Awaited<ReturnType<typeof startServer>>;
  /** Treats the local test server's address as public, as a real downstream API would be. */
  let trusting: QuickJsConnectorRuntime;
  /** The production policy: nothing private is trusted. */
  let strict: QuickJsConnectorRuntime;

  beforeAll(async () => {
    local = await startServer();
    trusting = await createQuickJsRuntime({ workers: 1, limits: { pendingCalls: 3 }, http: { trustedAddresses: ['127.0.0.1'], maxResponseBytes: 5000 } });
    strict = await createQuickJsRuntime({ workers: 1 });
  });
  afterAll(async () => {
    await Promise.all([trusting.close(), strict.close()]);
    local.server.closeAllConnections();
    await new Promise((resolve) => local.server.close(resolve));
  });
  beforeEach(() => (local.hits.length = 0));

  const call = (runtime: QuickJsConnectorRuntime, code: string, allowedHosts = ['127.0.0.1']) =>
    runtime.run({ cacheKey: 'http', code, entity: null, timeoutMs: 5000, allowedHosts });

  /** A connector that requests `request` and answers with the response or the error message. */
  const tryRequest = (request: string) => `
    try {
      const r = await Context.Http.Request(${request});
      Context.SetResponseEntity({ ResponseBody: { status: r.status, json: r.json, body: r.body.slice(0, 50) } });
    } catch (e) {
      Context.SetResponseEntity({ ResponseBody: { error: e.message } });
    }`;

  it('stops a run waiting on a slow response when it is cancelled', async () => {
    const cancel = new Cancellation();
    const started = Date.now();
    setTimeout(() => cancel.request(), 200);
    const code = `await Context.Http.Request({ url: '${local.base}/slow' }); Context.SetResponseEntity({ ResponseBody: 'late' });`;
    const result = await trusting.run({ cacheKey: 'http', code, entity: null, timeoutMs: 60_000, allowedHosts: ['127.0.0.1'], cancel });
    expect(result).toMatchObject({ kind: 'failed', reason: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('fetches JSON from an allowed host', async () => {
    const result = await call(trusting, tryRequest(`{ url: '${local.base}/json' }`));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { status: 200, json: { hello: 'world' } } });
  });

  it('sends a method, headers and a JSON body', async () => {
    const result = await call(trusting, tryRequest(`{ method: 'post', url: '${local.base}/echo', headers: { 'X-Token': 't1' }, body: { a: 1 } }`));
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: { status: 200, json: { method: 'POST', contentType: 'application/json', token: 't1', body: '{"a":1}' } },
    });
  });

  it("sends the run's trace context on every hop in place of any the connector set, and the connector's own without one", async () => {
    const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' };
    const forged = `headers: { Traceparent: '00-11111111111111111111111111111111-2222222222222222-01', tracestate: 'forged=1' }`;
    const code = tryRequest(`{ url: '${local.base}/redirect?to=/trace', ${forged} }`);
    const traced = await trusting.run({ cacheKey: 'http', code, entity: null, timeoutMs: 5000, allowedHosts: ['127.0.0.1'], trace });
    expect(traced).toMatchObject({ kind: 'ok', responseBody: { status: 200, json: trace } });
    const untraced = await call(trusting, tryRequest(`{ url: '${local.base}/trace', ${forged} }`));
    expect(untraced).toMatchObject({ kind: 'ok', responseBody: { json: { traceparent: '00-11111111111111111111111111111111-2222222222222222-01', tracestate: 'forged=1' } } });
  });

  it('follows redirects within the allowed hosts', async () => {
    const result = await call(trusting, tryRequest(`{ url: '${local.base}/redirect?to=/json' }`));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { status: 200, json: { hello: 'world' } } });
  });

  it('obeys the rules fetch obeys (http-exchange.ts): decompresses, drops credentials on a redirect to another origin', async () => {
    const other = await startServer();
    try {
      const zipped = await call(trusting, tryRequest(`{ url: '${local.base}/gzip' }`));
      expect(zipped).toMatchObject({ kind: 'ok', responseBody: { status: 200, json: { zipped: true } } });
      const headers = `{ Authorization: 'Bearer s', 'X-Token': 't1' }`;
      const same = await call(trusting, tryRequest(`{ url: '${local.base}/redirect?to=/echo', headers: ${headers} }`));
      expect(same).toMatchObject({ kind: 'ok', responseBody: { json: { authorization: 'Bearer s', token: 't1' } } });
      const cross = await call(trusting, tryRequest(`{ url: '${local.base}/redirect?to=${encodeURIComponent(`${other.base}/echo`)}', headers: ${headers} }`));
      expect(cross).toMatchObject({ kind: 'ok', responseBody: { json: { token: 't1' } } });
      expect((cross as { responseBody: { json: object } }).responseBody.json).not.toHaveProperty('authorization');
    } finally {
      other.server.closeAllConnections();
      other.server.close();
    }
  });

  it('refuses hosts that are not allowed', async () => {
    const result = await call(trusting, tryRequest(`{ url: '${local.base}/json' }`), ['api.example.com']);
    expect(result).toMatchObject({ responseBody: { error: `The host '${new URL(local.base).host}' is not in this integration's allowed hosts.` } });
    expect(local.hits).toEqual([]);
  });

  it('refuses every request, Context.Http and fetch, with the message given when HTTP is blocked for the run', async () => {
    const blockedHttp = 'Outbound HTTP is blocked in this replay.';
    const code = `
      const viaHttp = await Context.Http.Request({ url: '${local.base}/json' }).then(() => 'sent', (e) => e.message);
      const viaFetch = await fetch('${local.base}/json').then(() => 'sent', (e) => e.message);
      Context.SetResponseEntity({ ResponseBody: { viaHttp, viaFetch } });`;
    const result = await trusting.run({ cacheKey: 'http-blocked', code, entity: null, timeoutMs: 5000, allowedHosts: ['127.0.0.1'], blockedHttp });
    expect(result).toMatchObject({ kind: 'ok', responseBody: { viaHttp: blockedHttp, viaFetch: expect.stringContaining(blockedHttp) } });
    expect(local.hits).toEqual([]);
  });

  it('allows a host with a port only on that port', async () => {
    const port = Number(new URL(local.base).port);
    const onPort = await call(trusting, tryRequest(`{ url: '${local.base}/json' }`), [`127.0.0.1:${port}`]);
    expect(onPort).toMatchObject({ kind: 'ok', responseBody: { status: 200, json: { hello: 'world' } } });
    const otherPort = await call(trusting, tryRequest(`{ url: '${local.base}/json' }`), [`127.0.0.1:${port === 65535 ? port - 1 : port + 1}`]);
    expect(otherPort).toMatchObject({ responseBody: { error: `The host '127.0.0.1:${port}' is not in this integration's allowed hosts.` } });
    expect(local.hits).toEqual(['GET /json']);
  });

  it.each([
    ['loopback', 'http://127.0.0.1:9/x', '127.0.0.1'],
    ['IPv6 loopback', 'http://[::1]:9/x', '[::1]'],
    ['a private network', 'http://10.0.0.1/x', '10.0.0.1'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['IPv4 mapped in IPv6', 'http://[::ffff:127.0.0.1]:9/x', '[::ffff:7f00:1]'],
    ['IPv4-compatible IPv6', 'http://[::127.0.0.1]:9/x', '[::7f00:1]'],
    ['decimal IPv4', 'http://2130706433:9/x', '127.0.0.1'],
  ])('refuses %s before connecting', async (_name, url, host) => {
    const result = await call(strict, tryRequest(`{ url: '${url}' }`), [host]);
    expect(result).toMatchObject({ kind: 'ok', responseBody: { error: expect.stringMatching(/private, loopback or link-local/) } });
  });

  it('refuses a host name that resolves to loopback', async () => {
    const result = await call(strict, tryRequest(`{ url: 'http://localhost:${new URL(local.base).port}/json' }`), ['localhost']);
    expect(result).toMatchObject({ responseBody: { error: "The host 'localhost' resolves to a private, loopback or link-local address and cannot be requested." } });
    expect(local.hits).toEqual([]);
  });

  it('checks every redirect: a redirect to loopback or metadata is refused', async () => {
    for (const target of ['http://[::1]:9/x', 'http://169.254.169.254/latest/meta-data/']) {
      const result = await call(trusting, tryRequest(`{ url: '${local.base}/redirect?to=${encodeURIComponent(target)}' }`), ['127.0.0.1', '[::1]', '169.254.169.254']);
      expect(result).toMatchObject({ responseBody: { error: expect.stringMatching(/private, loopback or link-local/) } });
    }
    const elsewhere = await call(trusting, tryRequest(`{ url: '${local.base}/redirect?to=${encodeURIComponent('http://evil.example/')}' }`));
    expect(elsewhere).toMatchObject({ responseBody: { error: "The host 'evil.example' is not in this integration's allowed hosts." } });
  });

  it('refuses other schemes and credentials in URLs', async () => {
    const file = await call(trusting, tryRequest(`{ url: 'file:///etc/passwd' }`));
    expect(file).toMatchObject({ responseBody: { error: 'Only http and https URLs can be requested, not file:.' } });
    const creds = await call(trusting, tryRequest(`{ url: 'http://user:pw@127.0.0.1/' }`));
    expect(creds).toMatchObject({ responseBody: { error: expect.stringMatching(/credentials/) } });
  });

  it('limits the response size and the request time', async () => {
    const big = await call(trusting, tryRequest(`{ url: '${local.base}/big' }`));
    expect(big).toMatchObject({ responseBody: { error: expect.stringMatching(/larger than the limit of 5000 bytes/) } });
    const slow = await call(trusting, tryRequest(`{ url: '${local.base}/slow', timeoutMs: 100 }`));
    expect(slow).toMatchObject({ responseBody: { error: expect.stringMatching(/timed out after 100 ms/) } });
  });

  it('caps the requests in flight: one more than the limit ends the run', async () => {
    const settled = (n: number) => `
      const results = await Promise.allSettled(Array.from({ length: ${n} }, () => Context.Http.Request({ url: '${local.base}/json' })));
      Context.SetResponseEntity({ ResponseBody: results.map((r) => r.status) });`;
    expect(await call(trusting, settled(3))).toMatchObject({ kind: 'ok', responseBody: ['fulfilled', 'fulfilled', 'fulfilled'] });
    expect(await call(trusting, settled(4))).toMatchObject({
      kind: 'failed',
      reason: 'limit',
      message: 'The connector started more than 3 HTTP requests, file reads and crypto operations at once (limits.pendingCalls); await some before starting more.',
    });
  });

  it('ends the run cleanly with a request still in flight', async () => {
    const code = `Context.Http.Request({ url: '${local.base}/slow' }); Context.SetResponseEntity({ ResponseBody: 'done' });`;
    expect(await call(trusting, code)).toMatchObject({ kind: 'ok', responseBody: 'done' });
    const timedOut = await trusting.run({ cacheKey: 'http', code: `await Context.Http.Request({ url: '${local.base}/slow' });`, entity: null, timeoutMs: 200, allowedHosts: ['127.0.0.1'] });
    expect(timedOut).toMatchObject({ kind: 'failed', reason: 'timeout' });
    expect(await call(trusting, tryRequest(`{ url: '${local.base}/json' }`))).toMatchObject({ kind: 'ok', responseBody: { status: 200 } });
  });
});
