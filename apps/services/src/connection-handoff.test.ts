import { EventEmitter } from 'node:events';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { ConnectionHandoff } from './connection-handoff';
import type { ConnectionNotice, Taker } from './connection-handoff';

/** A process of the cluster as the handoff sees it: it records what it is sent; the test decides whether it takes it. */
class FakeTaker extends EventEmitter {
  readonly handed: Array<{ notice: ConnectionNotice; socket: Socket }> = [];
  connected = true;
  failSends = false;

  send(notice: unknown, socket: unknown, _options: unknown, callback: (error: Error | null) => void): boolean {
    if (this.failSends) {
      setImmediate(() => callback(new Error('channel closed')));
      return false;
    }
    this.handed.push({ notice: notice as ConnectionNotice, socket: socket as Socket });
    setImmediate(() => callback(null));
    return true;
  }

  isConnected(): boolean {
    return this.connected;
  }

  take(at = this.handed.length - 1): void {
    this.emit('message', { kind: 'gi:connection-taken', id: this.handed[at].notice.id });
  }
}

const asTaker = (fake: FakeTaker) => fake as unknown as Taker;
const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('ConnectionHandoff', () => {
  let handoff: ConnectionHandoff;
  let port: number;
  const clients: Socket[] = [];
  const dial = () => {
    const client = connect(port, '127.0.0.1');
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    handoff = new ConnectionHandoff();
    port = await handoff.listen(0, '127.0.0.1');
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.destroy();
    handoff.close();
  });

  it('hands connections to the processes in turn, skipping one whose channel is gone', async () => {
    const [a, b, c] = [new FakeTaker(), new FakeTaker(), new FakeTaker()];
    for (const taker of [a, b, c]) handoff.add(asTaker(taker));
    c.connected = false;
    for (let i = 0; i < 4; i++) dial();
    await until(() => a.handed.length + b.handed.length === 4);
    expect([a.handed.length, b.handed.length, c.handed.length]).toEqual([2, 2, 0]);
  });

  it('hands a connection that a process did not take before it ended to the next one, unread', async () => {
    const [a, b] = [new FakeTaker(), new FakeTaker()];
    handoff.add(asTaker(a));
    const client = dial();
    client.write('GET / HTTP/1.1\r\n\r\n');
    await until(() => a.handed.length === 1);
    handoff.add(asTaker(b));
    // A dies before it says it took it: B gets the same connection, which nobody read from yet.
    handoff.remove(asTaker(a));
    await until(() => b.handed.length === 1);
    const { socket } = b.handed[0];
    expect(socket).toBe(a.handed[0].socket);
    expect(socket.destroyed).toBe(false);
    socket.resume();
    const data = await new Promise<string>((resolve) => socket.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    expect(data).toBe('GET / HTTP/1.1\r\n\r\n');
  });

  it('hands a connection that could not be sent to the next process', async () => {
    const [a, b] = [new FakeTaker(), new FakeTaker()];
    a.failSends = true;
    handoff.add(asTaker(a));
    handoff.add(asTaker(b));
    dial();
    await until(() => b.handed.length === 1);
  });

  it('closes its own copy once a process took it, and keeps connections that came before any process for the first', async () => {
    dial();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const a = new FakeTaker();
    handoff.add(asTaker(a));
    await until(() => a.handed.length === 1);
    a.take();
    await until(() => a.handed[0].socket.destroyed);
    // Taken: the process ending later hands nothing again.
    const b = new FakeTaker();
    handoff.add(asTaker(b));
    handoff.remove(asTaker(a));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(b.handed).toHaveLength(0);
  });
});
