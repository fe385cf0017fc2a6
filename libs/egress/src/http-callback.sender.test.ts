import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { HttpCallbackSender } from './http-callback.sender';

interface Received {
  method?: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local receiver answering `status` (or never, for 'hang'). */
async function receiver(answer: number | 'hang') {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method, headers: req.headers, body });
      if (answer === 'hang') return;
      res.writeHead(answer, answer === 302 ? { location: 'http://127.0.0.1:1/elsewhere' } : {});
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks?x=1`;
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { url, received, close };
}

describe('HttpCallbackSender', () => {
  const trusting = new HttpCallbackSender({ trustedAddresses: ['127.0.0.1'], timeoutMs: 500 });
  const strict = new HttpCallbackSender({ trustedAddresses: [], timeoutMs: 500 });

  it('POSTs the body with the given headers and reports the status', async () => {
    const local = await receiver(204);
    try {
      const result = await trusting.post(local.url, { 'content-type': 'application/json', 'webhook-id': 'inv-1' }, '{"a":1}');
      expect(result).toEqual({ kind: 'answered', status: 204 });
      expect(local.received).toEqual([
        { method: 'POST', body: '{"a":1}', headers: expect.objectContaining({ 'content-type': 'application/json', 'webhook-id': 'inv-1', 'content-length': '7' }) },
      ]);
    } finally {
      await local.close();
    }
  });

  it('reports non-2xx answers, redirects included, without following them', async () => {
    for (const status of [500, 302]) {
      const local = await receiver(status);
      try {
        expect(await trusting.post(local.url, {}, '{}')).toEqual({ kind: 'answered', status });
        expect(local.received).toHaveLength(1);
      } finally {
        await local.close();
      }
    }
  });

  it('refuses private and loopback destinations unless trusted, and never sends to them', async () => {
    const local = await receiver(200);
    try {
      expect(await strict.post(local.url, {}, '{}')).toEqual({ kind: 'refused', reason: 'The address 127.0.0.1 is private, loopback or link-local and cannot be requested.' });
      expect(await strict.post('http://169.254.169.254/latest/meta-data', {}, '{}')).toMatchObject({ kind: 'refused' });
      expect(await strict.post('http://localhost:1/', {}, '{}')).toEqual({
        kind: 'refused',
        reason: "The host 'localhost' resolves to a private, loopback or link-local address and cannot be requested.",
      });
      expect(local.received).toHaveLength(0);
    } finally {
      await local.close();
    }
  });

  it('refuses the loopback receiver in any spelling of its address', async () => {
    const local = await receiver(200);
    const port = new URL(local.url).port;
    try {
      for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[::ffff:127.0.0.1]', '2130706433', '0x7f.1', '127.1', '[0:0:0:0:0:0:0:1]']) {
        expect(await strict.post(`http://${host}:${port}/hooks`, {}, '{}')).toMatchObject({ kind: 'refused' });
      }
      expect(local.received).toHaveLength(0);
    } finally {
      await local.close();
    }
  });

  it('trusts an address in any spelling of the same destination, and only that one', async () => {
    const local = await receiver(200);
    const port = new URL(local.url).port;
    try {
      const trustingMapped = new HttpCallbackSender({ trustedAddresses: ['::ffff:127.0.0.1'], timeoutMs: 500 });
      expect(await trustingMapped.post(local.url, {}, '{}')).toEqual({ kind: 'answered', status: 200 });
      expect(await trusting.post(`http://2130706433:${port}/hooks`, {}, '{}')).toEqual({ kind: 'answered', status: 200 });
      expect(await trusting.post(`http://[::127.0.0.1]:${port}/hooks`, {}, '{}')).toMatchObject({ kind: 'refused' });
      expect(local.received).toHaveLength(2);
    } finally {
      await local.close();
    }
  });

  it.each([
    ['another scheme', 'ftp://example.com/x', 'Only http and https callback URLs are allowed, not ftp:.'],
    ['credentials', 'https://user:pw@example.com/x', 'Callback URLs with credentials are not allowed.'],
    ['no URL at all', 'not a url', 'The callback URL is not a valid URL.'],
  ])('refuses %s', async (_case, url, reason) => {
    expect(await strict.post(url, {}, '{}')).toEqual({ kind: 'refused', reason });
  });

  it('reports a receiver that does not answer in time, or is not there, as unreachable', async () => {
    const local = await receiver('hang');
    try {
      expect(await trusting.post(local.url, {}, '{}')).toEqual({ kind: 'unreachable', reason: 'No answer within 500 ms of connecting.' });
    } finally {
      await local.close();
    }
    expect(await trusting.post('http://127.0.0.1:1/', {}, '{}')).toMatchObject({ kind: 'unreachable', reason: expect.stringMatching(/^The request failed: .*ECONNREFUSED/) });
    expect(await strict.post('http://no-such-host.invalid/', {}, '{}')).toEqual({ kind: 'unreachable', reason: "The host 'no-such-host.invalid' could not be resolved." });
  });

  it('gives up on a host that never completes the connection after connectTimeoutMs, however long the answer may take', async () => {
    // A listener whose process is stopped: once its accept queue is full the kernel drops new connections' SYNs.
    const stopped = spawn(process.execPath, ['-e', "const s = require('node:net').createServer(); s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => { console.log(s.address().port); process.kill(process.pid, 'SIGSTOP'); });"]);
    const fill: Socket[] = [];
    try {
      const port = Number(await new Promise<string>((resolve) => stopped.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))));
      for (let i = 0; i < 4; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        fill.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      const sender = new HttpCallbackSender({ trustedAddresses: ['127.0.0.1'], timeoutMs: 10_000, connectTimeoutMs: 300 });
      const started = Date.now();
      expect(await sender.post(`http://127.0.0.1:${port}/hooks`, {}, '{}')).toEqual({ kind: 'unreachable', reason: 'Could not connect within 300 ms.' });
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      for (const socket of fill) socket.destroy();
      stopped.kill('SIGKILL');
    }
  });
});
