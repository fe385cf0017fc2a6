import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';

/**
 * A loopback TCP proxy the test owns, in front of a shared service (the RabbitMQ broker): services
 * dial the proxy, so the test can take the service away from them alone and give it back, without
 * touching what other tests use. `cut` resets every connection through it and refuses new ones (a
 * broker that stopped: connections reset, new ones refused at once); `restore` lets them through again.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private passing = true;
  private readonly server = createServer((downstream) => {
    if (!this.passing) return void downstream.resetAndDestroy();
    const upstream = connect(this.target.port, this.target.host);
    for (const socket of [downstream, upstream]) {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      socket.on('error', () => {
        downstream.destroy();
        upstream.destroy();
      });
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });

  private constructor(private readonly target: { host: string; port: number }) {}

  /** A proxy to the host and port of `url` (amqp://user:pass@host:port/vhost), listening on a free loopback port. */
  static async to(url: string): Promise<TcpProxy> {
    const { hostname, port } = new URL(url);
    const proxy = new TcpProxy({ host: hostname, port: Number(port || 5672) });
    await new Promise<void>((resolve, reject) => proxy.server.once('error', reject).listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** `url` with the proxy's address in place of the service's. */
  via(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String((this.server.address() as { port: number }).port);
    return parsed.toString();
  }

  cut(): void {
    this.passing = false;
    for (const socket of this.sockets) socket.resetAndDestroy();
  }

  restore(): void {
    this.passing = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
