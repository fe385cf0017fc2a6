import { Writable } from 'node:stream';
import { connect } from 'amqplib';
import { brokerSocket, coalesceWrites } from './coalesced-writes';

// The real broker: `rabbitmq-server -detached` starts it when it is down.
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A socket-like stream that records each system call's worth of chunks. */
function recordingStream(highWaterMark = 16 * 1024) {
  const calls: string[][] = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      calls.push([chunk.toString()]);
      callback();
    },
    writev(chunks, callback) {
      calls.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
      callback();
    },
  });
  return { stream, calls };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('coalesceWrites', () => {
  it('sends the frames written in one turn together, and each later turn its own', async () => {
    const { stream, calls } = recordingStream();
    coalesceWrites(stream);
    stream.write('method');
    stream.write('header');
    stream.write('body');
    expect(calls).toEqual([]);
    await nextTurn();
    stream.write('ack');
    await nextTurn();
    expect(calls).toEqual([['method', 'header', 'body'], ['ack']]);
  });

  it('keeps back-pressure: a write past the high-water mark answers false, and drain follows the flush', async () => {
    const { stream, calls } = recordingStream(8);
    coalesceWrites(stream);
    expect(stream.write('1234')).toBe(true);
    expect(stream.write('56789')).toBe(false);
    const drained = new Promise((resolve) => stream.once('drain', resolve));
    await drained;
    expect(calls).toEqual([['1234', '56789']]);
  });

  it('finds the socket under an amqplib connection, and nothing under anything else', () => {
    const { stream } = recordingStream();
    expect(brokerSocket({ connection: { stream } })).toBe(stream);
    expect(brokerSocket({ connection: {} })).toBeNull();
    expect(brokerSocket({})).toBeNull();
  });

  it('finds the socket under a real amqplib connection, and a turn of publishes reaches it as one write', async () => {
    const model = await connect(AMQP_URL);
    try {
      const socket = brokerSocket(model) as Writable & { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
      expect(socket).not.toBeNull();
      coalesceWrites(socket);
      const channel = await model.createChannel();
      await nextTurn();
      const writes: string[] = [];
      const write = socket._write.bind(socket);
      const writev = socket._writev.bind(socket);
      socket._write = (...args) => (writes.push('write'), write(...args));
      socket._writev = (...args) => (writes.push(`writev of ${(args[0] as unknown[]).length}`), writev(...args));
      for (let i = 0; i < 3; i++) channel.publish('', 'gi-test-coalesced-writes-nowhere', Buffer.from(`message ${i}`));
      await nextTurn();
      await nextTurn();
      // amqplib writes each small publish's frames as one buffer: three buffers, in one system call.
      expect(writes).toEqual(['writev of 3']);
      await channel.close();
    } finally {
      await model.close();
    }
  });
});
