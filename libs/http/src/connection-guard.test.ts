import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { guardConnections, throttledReport } from './connection-guard';

/** A raw client connection: what it received, and when it was closed (ms after it connected). */
async function open(port: number, head = '') {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const started = Date.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  if (head) socket.write(head);
  return { socket, received: () => received, closed };
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('guardConnections', () => {
  let server: Server;
  let port: number;
  let requests = 0;
  const clients: Socket[] = [];
  const logged: Array<{ refused: number; maxConnections: number }> = [];
  let refusedCount = 0;
  let guard: { open(): number };

  beforeEach(async () => {
    requests = 0;
    logged.length = 0;
    refusedCount = 0;
    server = createServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    guard = guardConnections(server, { maxConnections: 3, firstRequestMs: 300, onRefused: () => refusedCount++, logRefused: (fields) => logged.push(fields) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    for (const socket of clients.splice(0)) socket.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a connection past the limit 503 with Retry-After, never hands it to the app, and counts and logs it', async () => {
    // Three connections in the middle of a request: none is idle.
    for (let i = 0; i < 3; i++) clients.push((await open(port, 'GET / HTTP/1.1\r\nHost: x\r\n')).socket);
    await until(() => guard.open() === 3);
    const refused = await Promise.all([1, 2].map(() => open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')));
    await Promise.all(refused.map((client) => client.closed));
    for (const client of refused) {
      expect(client.received()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
      expect(client.received()).toMatch(/\r\nRetry-After: 1\r\n/);
      expect(client.received()).toMatch(/\r\nConnection: close\r\n/);
      expect(client.received()).toContain('"type":"urn:gi:problem:unavailable"');
    }
    expect(requests).toBe(0);
    expect(refusedCount).toBe(2);
    // One line for the first; the second is told in the next line, at most REFUSAL_LOG_EVERY_MS later.
    expect(logged).toEqual([{ refused: 1, maxConnections: 3 }]);
  });

  it('makes room by closing idle connections (keep-alive between requests) before it refuses one', async () => {
    const idle = await Promise.all([1, 2, 3].map(() => open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')));
    await until(() => idle.every((client) => client.received().endsWith('ok')));
    const next = await open(port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await next.closed;
    expect(next.received()).toMatch(/^HTTP\/1\.1 200 OK/);
    await Promise.all(idle.map((client) => client.closed));
    expect(refusedCount).toBe(0);
  });

  it('never closes a new connection to make room while its request may be on its way', async () => {
    const fresh = await Promise.all([1, 2, 3].map(() => open(port)));
    clients.push(...fresh.map((client) => client.socket));
    await until(() => guard.open() === 3);
    const next = await open(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await next.closed;
    expect(next.received()).toMatch(/^HTTP\/1\.1 503 /);
    expect(fresh.map((client) => client.socket.destroyed)).toEqual([false, false, false]);
    fresh[0].socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => fresh[0].received().endsWith('ok'));
  });

  it('closes a new connection that sends nothing within firstRequestMs, and leaves one that began its request to the headers timeout', async () => {
    const silent = await open(port);
    const started = await open(port, 'GET / HTTP/1.1\r\n');
    clients.push(started.socket);
    const closedAfter = await silent.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(250);
    expect(closedAfter).toBeLessThan(2000);
    expect(silent.received()).toBe('');
    expect(started.socket.destroyed).toBe(false);
    started.socket.write('Host: x\r\n\r\n');
    await until(() => started.received().endsWith('ok'));
  });

});

describe('throttledReport', () => {
  afterEach(() => jest.useRealTimers());

  it('reports the first event at once, the others of the interval together once it passed, and none when none came', () => {
    jest.useFakeTimers();
    const reports: number[] = [];
    const count = throttledReport((n) => reports.push(n), 10_000, () => Date.now());
    count();
    for (let i = 0; i < 41; i++) count();
    expect(reports).toEqual([1]);
    jest.advanceTimersByTime(9_999);
    expect(reports).toEqual([1]);
    jest.advanceTimersByTime(1);
    expect(reports).toEqual([1, 41]);
    jest.advanceTimersByTime(60_000);
    expect(reports).toEqual([1, 41]);
    count();
    expect(reports).toEqual([1, 41, 1]);
  });
});
