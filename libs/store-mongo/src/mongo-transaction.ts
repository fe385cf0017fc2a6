import { setTimeout as delay } from 'node:timers/promises';
import { MongoError } from 'mongodb';
import type { ClientSession, MongoClient, TransactionOptions } from 'mongodb';

/** A pause before trying again that grows with each try: 25 ms, 50 ms, ... at most 400 ms. */
export const backoff = (attempt: number): Promise<void> => delay(Math.min(400, 25 * 2 ** Math.min(attempt, 4)));

/**
 * Runs `work` in a transaction and commits it, once. A transaction the server calls transient
 * (TransientTransactionError: a write conflict with a concurrent one, a failover before the commit)
 * runs again while `deadline` (epoch ms) allows: it wrote nothing. A commit whose result is unknown
 * (UnknownTransactionCommitResult: the majority did not confirm it within the write concern's
 * wtimeout, or the connection was lost after the driver's one retry) is thrown at once for the caller
 * to undo: the driver's withTransaction would commit again for up to 120 s while its caller waits.
 */
export async function inTransaction(
  client: MongoClient,
  work: (session: ClientSession) => Promise<void>,
  deadline: number,
  options?: TransactionOptions,
): Promise<void> {
  const session = client.startSession();
  try {
    for (let attempt = 0; ; attempt++) {
      session.startTransaction(options);
      let failure: unknown;
      try {
        await work(session);
        await session.commitTransaction();
        return;
      } catch (error) {
        failure = error;
      }
      if (session.inTransaction()) await session.abortTransaction().catch(() => undefined);
      const transient = failure instanceof MongoError && failure.hasErrorLabel('TransientTransactionError') && !failure.hasErrorLabel('UnknownTransactionCommitResult');
      if (!transient || Date.now() >= deadline) throw failure;
      await backoff(attempt);
    }
  } finally {
    await session.endSession().catch(() => undefined);
  }
}
