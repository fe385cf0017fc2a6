import type { CompletionEvent, JobBus } from '@gi/contracts';

/** The message a process of an embedded cluster sends with the completions of its runs. */
export interface CompletionNotice {
  kind: 'gi:completed';
  events: CompletionEvent[];
}

/** The IPC channel of a cluster worker (`process`), or a stand-in in tests. */
export interface RelayChannel {
  send(message: CompletionNotice, callback: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  connected?: boolean;
}

export const isCompletionNotice = (message: unknown): message is CompletionNotice =>
  typeof message === 'object' && message !== null && (message as CompletionNotice).kind === 'gi:completed' && Array.isArray((message as CompletionNotice).events);

/**
 * A process of an embedded cluster runs the calls it accepts, but a long poll (or a wait on an
 * invocation another process recovered) may be answered by any process: every completion of this
 * process goes to the primary, which hands it to the others (relayCompletionNotices), and every notice
 * from the others wakes this process's waiters. Completions of one turn travel in one message, so the
 * relay costs a fraction of an IPC message per call. Returns the function that stops it.
 */
export async function relayCompletions(bus: Pick<JobBus, 'onCompletion'>, waiter: { notify(event: CompletionEvent): void }, channel: RelayChannel): Promise<() => Promise<void>> {
  let batch: CompletionEvent[] = [];
  const flush = () => {
    const events = batch;
    batch = [];
    // An error means the primary is gone (this process is ending): no one is left to tell.
    if (channel.connected !== false) channel.send({ kind: 'gi:completed', events }, () => undefined);
  };
  const subscription = await bus.onCompletion((event) => {
    if (batch.length === 0) setImmediate(flush);
    batch.push(event);
  });
  const receive = (message: unknown) => {
    if (isCompletionNotice(message)) for (const event of message.events) waiter.notify(event);
  };
  channel.on('message', receive);
  return async () => {
    channel.off('message', receive);
    await subscription.close();
  };
}

/** The primary's part: a notice from one process goes to every other live process. */
export function relayCompletionNotices(from: number, message: CompletionNotice, workers: Iterable<{ id: number; isConnected(): boolean; send(message: CompletionNotice, callback: (error: Error | null) => void): unknown }>,
): void {
  // A process that ended meanwhile had nothing left to wake.
  for (const worker of workers) if (worker.id !== from && worker.isConnected()) worker.send(message, () => undefined);
}
