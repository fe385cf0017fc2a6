import type { Writable } from 'node:stream';

/**
 * Makes what is written to the broker's socket in one turn of the event loop leave in one system call.
 * amqplib writes every frame on its own (a publish is two or three: method and header, body; an ack one),
 * each a write of its own and often a TCP segment the broker then handles alone. The socket is corked at
 * a turn's first write and uncorked once the turn's synchronous work is done, so its frames go out as
 * one writev. Back-pressure is unchanged: a write still answers false past the socket's high-water mark.
 *
 * Measured with sync calls at c=50 over RabbitMQ on 2 cores (alternating runs): 1,721-1,731 calls/s ->
 * 1,928-1,936; CPU per call gateway 315-317 µs -> 279, executor 323-332 -> 301-303, RabbitMQ 289-297 -> 246-247.
 */
export function coalesceWrites(socket: Writable): void {
  const write = socket.write;
  let corked = false;
  const uncork = () => {
    corked = false;
    socket.uncork();
  };
  socket.write = function (this: Writable, ...args: Parameters<Writable['write']>): boolean {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(uncork);
    }
    return write.apply(this, args);
  } as Writable['write'];
}

/** The socket under an amqplib connection (not in its types). */
export function brokerSocket(model: object): Writable | null {
  const stream = (model as { connection?: { stream?: unknown } }).connection?.stream;
  return stream && typeof (stream as Writable).cork === 'function' ? (stream as Writable) : null;
}
