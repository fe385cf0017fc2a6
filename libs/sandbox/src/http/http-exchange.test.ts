import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { ResolveHost } from '@gi/egress';
import { MAX_REDIRECTS, sendHttp, type HttpCaller, type HttpExchange } from './http-exchange';

/** A local server: /redirect?to= redirects, /loop redirects to itself, anything else answers its path. */
function startServer(): Promise<{ server: Server; port: number; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/redirect') res.writeHead(302, { Location: url.searchParams.get('to') ?? '/' }).end();
    else if (url.pathname === '/loop') res.writeHead(302, { Location: '/loop' }).end();
    else res.end(url.pathname);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, hits })));
}

describe('sendHttp: the rules every connector request obeys', () => {
  let local: Awaited<ReturnType<typeof startServer>>;
  beforeAll(async () => {
    local = await startServer();
  });
  afterAll(async () => {
    local.server.closeAllConnections();
    await new Promise((resolve) => local.server.close(resolve));
  });
  beforeEach(() => (local.hits.length = 0));

  /** DNS as the test has it: names never reach a real resolver. */
  const names: Record<string, string[]> = { 'api.test': ['127.0.0.1'], 'internal.test': ['10.0.0.7'], 'mixed.test': ['127.0.0.1', '192.168.1.1'], 'meta.test': ['169.254.169.254'] };
  const resolve: ResolveHost = async (host) => (names[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  const caller = (overrides: Partial<HttpCaller> = {}): HttpCaller => ({
    allowedHosts: ['api.test', 'internal.test', 'mixed.test', 'meta.test'],
    limits: { maxResponseBytes: 1000, defaultTimeoutMs: 2000, maxRedirects: 5, trustedAddresses: ['127.0.0.1'], trustLoopback: false, loopbackHint: '' },
    signal: new AbortController().signal,
    turn: () => Promise.resolve(),
    resolve,
    ...overrides,
  });
  const get = (url: string, extra: Partial<HttpExchange> = {}): HttpExchange => ({ method: 'GET', url, headers: {}, redirect: 'follow', ...extra });
  const base = () => `http://api.test:${local.port}`;

  it('connects to the checked address of a name', async () => {
    const reply = await sendHttp(get(`${base()}/hello`), caller());
    expect(reply).toMatchObject({ status: 200, url: `${base()}/hello`, redirected: false });
    expect(reply.body.toString()).toBe('/hello');
  });

  it.each([
    ['a private address', 'internal.test'],
    ['private and public addresses', 'mixed.test'],
    ['the metadata address', 'meta.test'],
  ])('refuses a name that resolves to %s, without connecting', async (_name, host) => {
    await expect(sendHttp(get(`http://${host}:${local.port}/x`), caller())).rejects.toThrow(`The host '${host}' resolves to a private, loopback or link-local address and cannot be requested.`);
    expect(local.hits).toEqual([]);
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    await expect(sendHttp(get(`${base()}/redirect?to=${encodeURIComponent(`http://internal.test:${local.port}/x`)}`), caller())).rejects.toThrow(/'internal.test' resolves to a private/);
    expect(local.hits).toEqual([`/redirect?to=${encodeURIComponent(`http://internal.test:${local.port}/x`)}`]);
  });

  it(`follows at most the operator's number of redirects, and never more than ${MAX_REDIRECTS}`, async () => {
    await expect(sendHttp(get(`${base()}/loop`), caller())).rejects.toThrow('Too many redirects (more than 5).');
    const many = caller({ limits: { ...caller().limits, maxRedirects: 100 } });
    await expect(sendHttp(get(`${base()}/loop`), many)).rejects.toThrow(`Too many redirects (more than ${MAX_REDIRECTS}).`);
    expect(local.hits).toHaveLength(6 + MAX_REDIRECTS + 1);
  });

  it('starts only in turn, and never once the run ended', async () => {
    const run = new AbortController();
    let letIn: () => void = () => {};
    const pending = sendHttp(get(`${base()}/late`), caller({ signal: run.signal, turn: () => new Promise<void>((resolve) => (letIn = resolve)) }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(local.hits).toEqual([]);
    run.abort();
    letIn();
    await expect(pending).rejects.toThrow('The request was cancelled because the run ended.');
    expect(local.hits).toEqual([]);
  });

  it('refuses a request body over the budget before anything is sent', async () => {
    await expect(sendHttp(get(`${base()}/x`, { method: 'POST', body: new Uint8Array(10 * 1024 * 1024 + 1) }), caller())).rejects.toThrow(/larger than 10 MiB/);
    expect(local.hits).toEqual([]);
  });

  describe('kept connections', () => {
    /** A server that counts its connections and, when told, drops a kept one as the next request arrives on it. */
    async function countingServer() {
      const state = { connections: 0, requests: 0, dropNextReuse: false };
      const server = createTcpServer((socket: Socket) => {
        state.connections++;
        let served = 0;
        socket.on('data', () => {
          if (served > 0 && state.dropNextReuse) {
            state.dropNextReuse = false;
            return void socket.resetAndDestroy();
          }
          served++;
          state.requests++;
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { state, server, port: (server.address() as AddressInfo).port };
    }

    it('sends the requests of one host and port over one connection, runs after runs', async () => {
      const { state, server, port } = await countingServer();
      try {
        for (let i = 0; i < 3; i++) expect((await sendHttp(get(`http://api.test:${port}/x`), caller())).status).toBe(200);
        expect(state).toMatchObject({ connections: 1, requests: 3 });
      } finally {
        server.close();
      }
    });

    it('never takes a kept connection for a request whose own destination is refused', async () => {
      const { state, server, port } = await countingServer();
      names['flip.test'] = ['127.0.0.1'];
      try {
        const flip = caller({ allowedHosts: ['flip.test'] });
        expect((await sendHttp(get(`http://flip.test:${port}/x`), flip)).status).toBe(200);
        // The name now resolves to a private address: refused, though a connection to its old address is kept.
        names['flip.test'] = ['10.0.0.7'];
        await expect(sendHttp(get(`http://flip.test:${port}/x`), flip)).rejects.toThrow(/'flip.test' resolves to a private/);
        expect(state).toMatchObject({ connections: 1, requests: 1 });
      } finally {
        delete names['flip.test'];
        server.close();
      }
    });

    it('sends an idempotent request again on a new connection when the kept one was closed under it, and never a POST', async () => {
      const { state, server, port } = await countingServer();
      try {
        expect((await sendHttp(get(`http://api.test:${port}/x`), caller())).status).toBe(200);
        state.dropNextReuse = true;
        expect((await sendHttp(get(`http://api.test:${port}/x`), caller())).status).toBe(200);
        expect(state).toMatchObject({ connections: 2, requests: 2 });
        state.dropNextReuse = true;
        await expect(sendHttp(get(`http://api.test:${port}/x`, { method: 'POST', body: new Uint8Array(1) }), caller())).rejects.toThrow(/failed: (read ECONNRESET|socket hang up)/);
        expect(state.requests).toBe(2);
      } finally {
        server.close();
      }
    });
  });
});
