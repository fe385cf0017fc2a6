import { MessageChannel } from 'node:worker_threads';
import { Outbox } from './outbox';

describe('Outbox', () => {
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('posts the messages of one turn together', async () => {
    const posted: number[][] = [];
    const outbox = new Outbox<number>((messages) => posted.push(messages), () => undefined);
    outbox.send(1);
    outbox.send(2);
    expect(outbox.pending).toBe(2);
    await turn();
    expect(posted).toEqual([[1, 2]]);
  });

  it('fails only the message that cannot be posted, and nothing escapes the turn', async () => {
    // A real port: a structured clone of a value nested 10,000 deep throws a RangeError.
    const { port1, port2 } = new MessageChannel();
    const received: unknown[] = [];
    port2.on('message', (messages: unknown[]) => received.push(...messages));
    const refused: Array<{ message: unknown; error: unknown }> = [];
    const outbox = new Outbox<unknown>((messages) => port1.postMessage(messages), (message, error) => refused.push({ message, error }));
    const deep = JSON.parse('['.repeat(10_000) + ']'.repeat(10_000));
    outbox.send('before');
    outbox.send(deep);
    outbox.send('after');
    await turn();
    for (let waited = 0; received.length < 2 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(received).toEqual(['before', 'after']);
    expect(refused).toHaveLength(1);
    expect(refused[0].message === deep && (refused[0].error as Error).name === 'RangeError').toBe(true);
    port1.close();
  });
});
