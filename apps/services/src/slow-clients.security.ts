import { Agent, request } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN, ServicesFixture } from './services.fixture';

/**
 * Slow and refused clients against the embedded service, with the server settings of `gi up` and short
 * timeouts, over loopback TCP (the kernel's buffers are part of what is measured): a body or headers
 * that stop arriving end with 408 and a closed connection; a refused call answers at once, reads no
 * more of its body and closes; keep-alive still serves normal calls.
 *
 * Time is the subject of the timeout cases, so they run on the wall clock against the server's real
 * timers; each bound states its margin. The cases about what is answered in which order wait for the
 * bytes themselves, never for a fixed time.
 */

const TIMEOUTS = { HEADERS_TIMEOUT_SECONDS: '1', BODY_IDLE_TIMEOUT_SECONDS: '1', BODY_TIMEOUT_SECONDS: '3', UPLOAD_TIMEOUT_SECONDS: '4' };
const fixture = new ServicesFixture({ ...TIMEOUTS, MAX_BODY_SIZE: '64kb' });
let server: Server;
let port: number;
let token: string;
/** The server's end of every connection, to read how many bytes it took in. */
const accepted: Socket[] = [];
const WEBHOOK = '/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true';

beforeAll(async () => {
  await fixture.start();
  ({ token } = await fixture.setUpBot('acme'));
  server = fixture.service('embedded').server;
  server.on('connection', (socket: Socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await fixture.close();
});

interface Exchange {
  socket: Socket;
  /** Everything the server sent. */
  received: () => string;
  /** When the first byte of the reply came, ms after the start. */
  firstByteAfter: () => number | null;
  /** Resolves with the ms after the start at which the server closed the connection. */
  closed: Promise<number>;
  /** The server's end of the connection. */
  serverSide: () => Socket;
}

/** Resolves once `predicate` holds of what arrived, polling every 10 ms; fails after 5 s. */
async function until(predicate: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 5000; !predicate(); await new Promise((resolve) => setTimeout(resolve, 10))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 5 s`);
  }
}

/** Opens a raw connection and writes `head`; what follows is up to the test. */
async function open(head: string): Promise<Exchange> {
  const before = accepted.length;
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const started = Date.now();
  let text = '';
  let firstByte: number | null = null;
  socket.on('data', (chunk: Buffer) => {
    firstByte ??= Date.now() - started;
    text += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  // A connection still open after 8 s has failed whatever the test expects: it is cut, and the time says so.
  const closed = new Promise<number>((resolve) => {
    const giveUp = setTimeout(() => socket.destroy(), 8000);
    socket.once('close', () => {
      clearTimeout(giveUp);
      resolve(Date.now() - started);
    });
  });
  socket.write(head);
  return { socket, received: () => text, firstByteAfter: () => firstByte, closed, serverSide: () => accepted[before] };
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
const postHead = (path: string, headers: Record<string, string>) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;

/** Writes a chunked body of `totalBytes` as fast as the connection takes it, until the server closes. */
function pumpChunked(socket: Socket, totalBytes: number): { sent: () => number } {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const framed = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
  let sent = 0;
  const pump = () => {
    while (sent < totalBytes && !socket.destroyed) {
      sent += chunk.length;
      if (!socket.write(framed)) return void socket.once('drain', pump);
    }
    if (!socket.destroyed) socket.write('0\r\n\r\n');
  };
  pump();
  return { sent: () => sent };
}

describe('slow clients', () => {
  it('closes a body trickled 1 byte every 2 s once the idle timeout (1 s) passes, with a 408 problem', async () => {
    const exchange = await open(postHead(WEBHOOK, { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '50' }));
    exchange.socket.write('{');
    const trickle = setInterval(() => exchange.socket.write(' '), 2000);
    const closedAfter = await exchange.closed;
    clearInterval(trickle);
    expect(statusOf(exchange.received())).toBe(408);
    expect(exchange.received()).toContain('"type":"urn:gi:problem:request-timeout"');
    // The idle timeout is 1 s: 100 ms early for timer granularity, and the reply before the next
    // trickled byte (2 s) would have reset it.
    expect(exchange.firstByteAfter()).toBeGreaterThanOrEqual(900);
    expect(exchange.firstByteAfter()).toBeLessThan(2000);
    // The reply, then a second for it to reach the client, then the connection goes; 0.5 s spare.
    expect(closedAfter).toBeLessThan(3500);
  });

  it('closes a body that keeps trickling within the idle timeout once the whole-body timeout (3 s) passes', async () => {
    const exchange = await open(postHead(WEBHOOK, { authorization: `Bearer ${token}`, 'content-type': 'text/plain', 'content-length': '1000' }));
    const trickle = setInterval(() => exchange.socket.write('x'), 300);
    const closedAfter = await exchange.closed;
    clearInterval(trickle);
    expect(statusOf(exchange.received())).toBe(408);
    // The whole-body timeout is 3 s (100 ms early for timer granularity); closed within 2.5 s of it,
    // well before the 1,000 bytes at 300 ms each (300 s) would have arrived.
    expect(exchange.firstByteAfter()).toBeGreaterThanOrEqual(2900);
    expect(closedAfter).toBeLessThan(5500);
  });

  it('closes a body shorter than its Content-Length once the idle timeout passes (it used to wait for minutes)', async () => {
    const exchange = await open(postHead(WEBHOOK, { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': '100' }) + '{"a":1}');
    expect(await exchange.closed).toBeLessThan(3500);
    expect(statusOf(exchange.received())).toBe(408);
  });

  it('closes headers that trickle in, a line every 300 ms, once the headers timeout (1 s) passes, with a 408 problem', async () => {
    const exchange = await open('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    const trickle = setInterval(() => exchange.socket.write('X-Slow: 1\r\n'), 300);
    const closedAfter = await exchange.closed;
    clearInterval(trickle);
    expect(closedAfter).toBeLessThan(3500);
    expect(statusOf(exchange.received())).toBe(408);
    expect(exchange.received()).toContain('application/problem+json');
  });

  it('closes a connection that sends nothing once the headers timeout passes', async () => {
    const exchange = await open('');
    expect(await exchange.closed).toBeLessThan(3500);
  });

  it('ends a file transfer that stops arriving mid-file with 408 and keeps none of its files', async () => {
    const boundary = 'b0undary';
    const exchange = await open(
      postHead('/api/Platform/acme/Order/ack/GenericIntegrationFileTransfer?asyncResponse=true', {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': '100000',
      }) + `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="a.txt"\r\n\r\n${'x'.repeat(5000)}`,
    );
    expect(await exchange.closed).toBeLessThan(3500);
    expect(statusOf(exchange.received())).toBe(408);
    // The upload is removed once the reply is out: wait for the directory to empty, not for a time.
    const filesDir = join(fixture.config.DATA_DIR, 'files');
    const files = () => readdirSync(filesDir, { recursive: true }).filter((name) => statSync(join(filesDir, String(name))).isFile());
    await until(() => files().length === 0, 'the partial upload removed');
    expect(files()).toEqual([]);
  });

  it('ends a control API body that stops arriving with 408', async () => {
    const exchange = await open(postHead('/admin/bots/acme/tokens', { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-length': '40' }) + '{"label":');
    expect(await exchange.closed).toBeLessThan(3500);
    expect(statusOf(exchange.received())).toBe(408);
  });
});

describe('refused calls', () => {
  /** A call refused with `status` while a 40 MiB chunked body is on its way: answered at once, the body not read, the connection closed. */
  async function refusedWithBodyInFlight(headers: Record<string, string>, status: number, path = WEBHOOK) {
    const exchange = await open(postHead(path, { 'transfer-encoding': 'chunked', 'content-type': 'application/json', ...headers }));
    const pump = pumpChunked(exchange.socket, 40 * 1024 * 1024);
    const closedAfter = await exchange.closed;
    const bytesRead = exchange.serverSide().bytesRead;
    expect([statusOf(exchange.received()), exchange.received().includes('application/problem+json')]).toEqual([status, true]);
    // "At once": within 0.5 s, where reading the 40 MiB body on loopback would take longer; closed within 2.5 s.
    expect(exchange.firstByteAfter()).toBeLessThan(500);
    expect(closedAfter).toBeLessThan(2500);
    // What the server took in: the head and what its buffers held, never the body.
    expect(bytesRead).toBeLessThan(2 * 1024 * 1024);
    return { bytesRead, sent: pump.sent() };
  }

  it('answers 401 at once with a 40 MiB chunked body in flight, reads next to none of it, and closes', async () => {
    await refusedWithBodyInFlight({}, 401);
    await refusedWithBodyInFlight({ authorization: 'Bearer forged' }, 401);
  });

  it('answers 403 (another bot), 404 (unknown integration), 415 and a 400 on the query the same way', async () => {
    const other = await fixture.setUpBot('other');
    await refusedWithBodyInFlight({ authorization: `Bearer ${other.token}` }, 403);
    await refusedWithBodyInFlight({ authorization: `Bearer ${token}` }, 404, '/api/Platform/acme/Order/nothing/GenericIntegration');
    await refusedWithBodyInFlight({ authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' }, 415);
    await refusedWithBodyInFlight({ authorization: `Bearer ${token}` }, 400, '/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=maybe');
  });

  it('answers 413 on a Content-Length over the limit, and 413 once a chunked body passes it, the same way', async () => {
    const exchange = await open(postHead(WEBHOOK, { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(40 * 1024 * 1024) }));
    exchange.socket.write(Buffer.alloc(1024 * 1024, 'a'));
    expect(await exchange.closed).toBeLessThan(2500);
    expect(statusOf(exchange.received())).toBe(413);
    expect(exchange.serverSide().bytesRead).toBeLessThan(2 * 1024 * 1024);
    await refusedWithBodyInFlight({ authorization: `Bearer ${token}` }, 413);
  });

  it('answers 429 over a quota the same way', async () => {
    const limited = await fixture.setUpBot('limited');
    await fixture.admin('PUT', '/bots/limited/quotas', { ratePerSecond: 0.01, burst: 1 });
    const agent = new Agent({ keepAlive: false });
    const first = await post(agent, '/api/Platform/limited/Order/ack/GenericIntegration?asyncResponse=true', limited.token, '{}');
    expect(first.status).toBe(202);
    await refusedWithBodyInFlight({ authorization: `Bearer ${limited.token}` }, 429, '/api/Platform/limited/Order/ack/GenericIntegration?asyncResponse=true');
  });

  it('answers an admin call without the admin token at once, not reading its body', async () => {
    await refusedWithBodyInFlight({}, 401, '/admin/bots/acme/tokens');
  });
});

function post(agent: Agent, path: string, bearer: string | undefined, body: string): Promise<{ status: number; connection?: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, socket: req.socket as Socket }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('keep-alive', () => {
  it('serves normal calls one after the other on one connection', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await post(agent, WEBHOOK, token, '{"orderId":1}');
      const second = await post(agent, WEBHOOK, token, '{"orderId":2}');
      expect([first.status, second.status]).toEqual([202, 202]);
      expect(second.socket).toBe(first.socket);
    } finally {
      agent.destroy();
    }
  });

  it('tells the client that a call refused before its body arrived closes its connection (Connection: close)', async () => {
    const exchange = await open(postHead(WEBHOOK, { 'content-type': 'application/json', 'content-length': '13' }));
    // The body is written only once the refusal arrived, so it certainly came before the body.
    await until(() => statusOf(exchange.received()) === 401, 'the refusal');
    exchange.socket.write('{"orderId":1}');
    expect(await exchange.closed).toBeLessThan(2500);
    expect(statusOf(exchange.received())).toBe(401);
    expect(exchange.received()).toMatch(/\r\nConnection: close\r\n/i);
  });

  it('keeps the connection of a call refused after its whole request arrived', async () => {
    const body = '{"orderId":1}';
    const call = (authorization: string) => postHead(WEBHOOK, { ...(authorization ? { authorization } : {}), 'content-type': 'application/json', 'content-length': String(body.length) }) + body;
    const statuses = () => [...exchange.received().matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    const exchange = await open(call(''));
    await until(() => statuses().length === 1, 'the first reply');
    exchange.socket.write(call(`Bearer ${token}`));
    await until(() => statuses().length === 2, 'the second reply');
    expect(statuses()).toEqual([401, 202]);
    expect(exchange.received()).not.toMatch(/connection: close/i);
    exchange.socket.destroy();
  });
});
