import { request } from 'node:http';
import type { IncomingHttpHeaders, OutgoingHttpHeaders, Server } from 'node:http';
import { Duplex } from 'node:stream';

/** One end of an in-memory connection: what it writes, the other end reads. */
class MemorySocket extends Duplex {
  peer!: MemorySocket;
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 0;
  readonly encrypted = false;

  override _read(): void {
    // Data is pushed by the peer's writes.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (this.peer.destroyed) return done(Object.assign(new Error('write after the peer closed'), { code: 'EPIPE' }));
    this.peer.push(chunk);
    done();
  }

  override _final(done: (error?: Error | null) => void): void {
    this.peer.push(null);
    done();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    if (!this.peer.destroyed) this.peer.destroy();
    done(error);
  }

  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  destroySoon(): void {
    this.end();
    if (this.writableFinished) this.destroy();
    else this.once('finish', () => this.destroy());
  }
}

function socketPair(): [MemorySocket, MemorySocket] {
  const client = new MemorySocket();
  const server = new MemorySocket();
  client.peer = server;
  server.peer = client;
  return [client, server];
}

export interface InProcessRequest {
  method?: string;
  /** Sent exactly as given (no normalisation of dot segments, slashes or escapes). */
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
}

export interface InProcessReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * Calls an HTTP server that does not listen (`createServer(app.callback())`): every request goes over its
 * own in-memory connection through Node's real HTTP parser, so paths, headers and bodies reach the app
 * exactly as a client on the network would send them, with no port and no proxy in between.
 */
export async function callInProcess(server: Server, call: InProcessRequest): Promise<InProcessReply> {
  const [client, end] = socketPair();
  server.emit('connection', end);
  try {
    return await new Promise<InProcessReply>((resolve, reject) => {
      const req = request({ method: call.method ?? 'GET', path: call.path, headers: { host: 'in-process', ...call.headers }, createConnection: () => client as never }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(call.body);
    });
  } finally {
    client.destroy();
  }
}

/**
 * Sends raw bytes over an in-memory connection (for requests no HTTP client would send: bad framing,
 * malformed request lines) and returns every byte the server answered, once it closed the connection
 * or `waitMs` passed.
 */
export async function sendRawInProcess(server: Server, raw: string | Buffer, waitMs = 3000): Promise<string> {
  const [client, end] = socketPair();
  server.emit('connection', end);
  const chunks: Buffer[] = [];
  client.on('data', (chunk: Buffer) => chunks.push(chunk));
  client.on('error', () => undefined);
  client.write(raw);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    client.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  client.destroy();
  return Buffer.concat(chunks).toString('latin1');
}
