import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as received. */
  body: string;
  at: number;
}

/**
 * A local receiver of callbacks: records every POST and answers each path with the statuses scripted
 * for it, in turn (the last one repeats; 204 when none).
 */
export class CallbackReceiver {
  readonly deliveries: Delivery[] = [];
  private readonly answers = new Map<string, number[]>();
  private server: Server | null = null;

  private constructor(private port: number) {}

  /** Listens on a free port of 127.0.0.1 (or the given one). */
  static async start(port = 0): Promise<CallbackReceiver> {
    const receiver = new CallbackReceiver(port);
    await receiver.listen();
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  answer(path: string, ...statuses: number[]): void {
    this.answers.set(path, statuses);
  }

  to(path: string): Delivery[] {
    return this.deliveries.filter((d) => d.path === path);
  }

  /** Resolves once `path` has received `count` deliveries. */
  async received(path: string, count = 1, timeoutMs = 20_000): Promise<Delivery[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.to(path).length < count) {
      if (Date.now() > deadline) throw new Error(`${path} received ${this.to(path).length} of ${count} callbacks in time`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return this.to(path);
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        this.deliveries.push({ path, headers: req.headers, body, at: Date.now() });
        const scripted = this.answers.get(path) ?? [204];
        const status = scripted.length > 1 ? (scripted.shift() as number) : scripted[0];
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
