import type { Worker } from 'node:cluster';
import type { Server as HttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';

/** Sent with a connection to the process that is to serve it. */
export interface ConnectionNotice {
  kind: 'gi:connection';
  id: number;
}

/** The process's answer: it holds the connection now. */
export interface ConnectionTaken {
  kind: 'gi:connection-taken';
  id: number;
}

const isConnectionNotice = (message: unknown): message is ConnectionNotice =>
  typeof message === 'object' && message !== null && (message as ConnectionNotice).kind === 'gi:connection' && typeof (message as ConnectionNotice).id === 'number';

const isConnectionTaken = (message: unknown): message is ConnectionTaken =>
  typeof message === 'object' && message !== null && (message as ConnectionTaken).kind === 'gi:connection-taken' && typeof (message as ConnectionTaken).id === 'number';

/** A process of the cluster, as the handoff sees it. */
export type Taker = Pick<Worker, 'send' | 'isConnected' | 'on' | 'off'>;

/**
 * The listener of an embedded cluster's primary, in place of node:cluster's round robin: it accepts each
 * connection without reading from it and hands it to the processes in turn. A connection stays the
 * primary's until its process says it took it: one handed to a process that ended first, or that could
 * not be sent, goes to the next. (node:cluster lost such a connection: handed to a process that had just
 * been killed, it was held open and never answered, docs/decisions.md.)
 */
export class ConnectionHandoff {
  private readonly listener: Server;
  private readonly takers: Array<{ taker: Taker; onMessage: (message: unknown) => void }> = [];
  private turn = 0;
  private nextId = 1;
  /** Connections handed out and not taken yet, by id. */
  private readonly pending = new Map<number, { socket: Socket; taker: Taker }>();
  /** Connections that came while no process could take one. */
  private readonly waiting: Socket[] = [];
  private closed = false;

  constructor() {
    this.listener = createServer({ pauseOnConnect: true }, (socket) => {
      socket.on('error', () => undefined);
      this.hand(socket);
    });
  }

  /** Listens on `port` (0: a free one) and `host`; resolves with the port. */
  async listen(port: number, host: string): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.listener.once('error', reject);
      this.listener.listen(port, host, () => {
        this.listener.off('error', reject);
        resolve();
      });
    });
    return (this.listener.address() as { port: number }).port;
  }

  /** A process that serves: connections go to it in turn from now on. */
  add(taker: Taker): void {
    const onMessage = (message: unknown) => {
      if (isConnectionTaken(message)) this.taken(message.id);
    };
    taker.on('message', onMessage);
    this.takers.push({ taker, onMessage });
    for (const socket of this.waiting.splice(0)) this.hand(socket);
  }

  /** A process that ended: the connections it did not take go to the others. */
  remove(taker: Taker): void {
    const at = this.takers.findIndex((entry) => entry.taker === taker);
    if (at >= 0) taker.off('message', this.takers.splice(at, 1)[0].onMessage);
    for (const [id, entry] of this.pending) {
      if (entry.taker !== taker) continue;
      this.pending.delete(id);
      this.hand(entry.socket);
    }
  }

  /**
   * Accepts no more connections; those no process took are closed. Those the processes hold are theirs
   * to end (Node's listener counts them until they do, so its own close is not waited for here).
   */
  close(): void {
    this.closed = true;
    this.listener.close();
    for (const socket of this.waiting.splice(0)) socket.destroy();
  }

  private hand(socket: Socket): void {
    if (socket.destroyed) return;
    const taker = this.nextTaker();
    if (!taker || this.closed) {
      if (this.closed) socket.destroy();
      else this.waiting.push(socket);
      return;
    }
    const id = this.nextId++;
    this.pending.set(id, { socket, taker });
    const notice: ConnectionNotice = { kind: 'gi:connection', id };
    // Kept open here until the process says it took its copy: if it never does, the next one gets it.
    taker.send(notice, socket, { keepOpen: true }, (error) => {
      if (!error || !this.pending.delete(id)) return;
      this.hand(socket);
    });
  }

  private taken(id: number): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    this.pending.delete(id);
    // The process holds its own copy: this one only closes the primary's descriptor.
    entry.socket.destroy();
  }

  private nextTaker(): Taker | undefined {
    for (let tried = 0; tried < this.takers.length; tried++) {
      const { taker } = this.takers[this.turn++ % this.takers.length];
      if (taker.isConnected()) return taker;
    }
    return undefined;
  }
}

/**
 * In a process of the cluster: serves the connections the primary hands over on `server`, as if it had
 * accepted them itself. Returns the function that stops taking them.
 */
export function takeConnectionsFromPrimary(server: HttpServer, channel: NodeJS.Process = process): () => void {
  const onMessage = (message: unknown, socket?: Socket) => {
    if (!isConnectionNotice(message) || !socket) return;
    channel.send?.({ kind: 'gi:connection-taken', id: message.id } satisfies ConnectionTaken);
    server.emit('connection', socket);
    socket.resume();
  };
  channel.on('message', onMessage);
  return () => channel.off('message', onMessage);
}
