import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CliEnv } from '@gi/config';
import type { CliIo } from './cli-io';
import { runCli } from './run-cli';

/** A request the fake service received. */
export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
}

type Route = (request: Recorded) => Reply;

export const problem = (status: number, title: string, detail: string, extra: Record<string, unknown> = {}): Reply => ({
  status,
  headers: { 'content-type': 'application/problem+json' },
  text: JSON.stringify({ type: 'about:blank', title, status, detail, ...extra }),
});

/** Plays the service's HTTP API for CLI tests: canned replies per "METHOD /path", every request recorded. */
export class FakeService {
  readonly requests: Recorded[] = [];
  private readonly routes = new Map<string, Route[]>();
  private constructor(private readonly server: Server) {}

  static async start(): Promise<FakeService> {
    const server = createServer();
    const fake = new FakeService(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const recorded: Recorded = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        fake.requests.push(recorded);
        const reply = fake.route(recorded);
        const headers = { ...(reply.json !== undefined && { 'content-type': 'application/json' }), ...reply.headers };
        res.writeHead(reply.status, headers);
        res.end(reply.json !== undefined ? JSON.stringify(reply.json) : (reply.text ?? ''));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Adds a reply for a route; several replies for one route are used in turn, the last one repeatedly. */
  on(method: string, path: string, ...replies: Array<Reply | Route>): this {
    this.routes.set(`${method} ${path}`, replies.map((r) => (typeof r === 'function' ? r : () => r)));
    return this;
  }

  requestsTo(method: string, path: string): Recorded[] {
    return this.requests.filter((r) => r.method === method && r.path === path);
  }

  reset(): void {
    this.requests.length = 0;
    this.routes.clear();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private route(request: Recorded): Reply {
    const queue = this.routes.get(`${request.method} ${request.path}`);
    if (!queue) return problem(404, 'Not found', `no route ${request.method} ${request.path}`);
    const next = queue.length > 1 ? (queue.shift() as Route) : queue[0];
    return next(request);
  }
}

export interface CapturedIo extends CliIo {
  stdout(): string;
  stderr(): string;
  sleeps: number[];
}

/** Output buffers instead of the terminal; sleeping returns at once. */
export function captureIo(options: { tty?: boolean; stdin?: string } = {}): CapturedIo {
  let out = '';
  let err = '';
  const sleeps: number[] = [];
  return {
    out: { write: (text: string) => (out += text), isTTY: false },
    err: { write: (text: string) => (err += text), isTTY: options.tty ?? false },
    sleep: async (ms) => void sleeps.push(ms),
    now: () => Date.now(),
    readStdin: async () => Buffer.from(options.stdin ?? '', 'utf8'),
    stdout: () => out,
    stderr: () => err,
    sleeps,
  };
}

/** The admin token `gi` is given against the fake service. */
export const FAKE_ADMIN_TOKEN = 'admin-secret-0123456789abcdef';

/**
 * For the describe block it is called in: a fake service, started before its tests and emptied before
 * each, and `gi`, which runs the CLI against it with the admin token (or with `env`). Nothing may start
 * a service of its own.
 */
export function cliAgainstFakeService() {
  let service: FakeService | undefined;
  beforeAll(async () => {
    service = await FakeService.start();
  });
  afterAll(() => service?.close());
  beforeEach(() => service?.reset());
  const started = (): FakeService => {
    if (!service) throw new Error('the fake service starts in beforeAll');
    return service;
  };
  const noUp = async () => {
    throw new Error('not in tests');
  };
  return {
    get service(): FakeService {
      return started();
    },
    async gi(argv: string[], env: CliEnv = { GI_URL: started().url, GI_ADMIN_TOKEN: FAKE_ADMIN_TOKEN }) {
      const io = captureIo();
      const code = await runCli(argv, io, env, noUp);
      return { code, out: io.stdout(), err: io.stderr() };
    },
  };
}
