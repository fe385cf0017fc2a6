import { GiError, idempotencyKeyReused, notFound, unavailable } from '@gi/domain';
import type { IdempotencyRecord, Invocation, InvocationMode, NewInvocation } from '@gi/domain';
import { LogThrottle } from '@gi/observability';
import type { AcceptedCall } from './accept-call';
import type { GatewayDeps } from './gateway.deps';

/** What was stored for a call: a new invocation, or nothing (the repeat of the one its Idempotency-Key first created). */
export type StoredCall =
  | { kind: 'new'; invocation: NewInvocation; mode: InvocationMode }
  | { kind: 'repeat'; invocation: Invocation; mode: InvocationMode };

/**
 * A store that refuses writes refuses every call: its error is logged once per window with the count of
 * refusals the previous window held back (`suppressed`), not once per call.
 */
export const STORE_FAILURE_LOG_WINDOW_MS = 10_000;
const storeFailures = new LogThrottle(STORE_FAILURE_LOG_WINDOW_MS);

/**
 * Step 3 of a webhook call: stores the invocation, before anything is published, so once this resolves
 * it is durable and will run. With an Idempotency-Key the invocation is stored only when the key is
 * new; a repeat of the same request stores nothing (its uploaded files are removed) and gets the
 * invocation the key first created; the key with another request is refused (422).
 */
export async function persistInvocation(deps: GatewayDeps, accepted: AcceptedCall): Promise<StoredCall> {
  const { invocation, record, mode } = accepted;
  const discardFiles = async () => {
    if (!accepted.hasFiles) return;
    await deps.uploads?.files.deleteAll(invocation).catch((err) => deps.logger.warn({ err, invocationId: invocation.id }, 'files left for the sweep'));
  };
  let holder: IdempotencyRecord | null = null;
  try {
    if (record) holder = await deps.store.invocations.createWithKey(invocation, record);
    else await deps.store.invocations.create(invocation);
  } catch (error) {
    await discardFiles();
    // An invocation over the size every store keeps (413); anything else means the store could not take it now.
    if (error instanceof GiError && error.code === 'payload_too_large') throw error;
    const admitted = storeFailures.admit('store write');
    if (admitted.write) deps.logger.error({ err: error, suppressed: admitted.suppressed }, 'store write failed');
    throw unavailable('The request could not be stored; nothing was accepted. Try again.');
  }
  if (record && holder) {
    await discardFiles();
    if (holder.fingerprint !== record.fingerprint) throw idempotencyKeyReused();
    const original = await deps.store.invocations.get({ botId: invocation.botId, id: holder.invocationId });
    if (!original) throw notFound('The invocation of this Idempotency-Key no longer exists (expired).');
    return { kind: 'repeat', invocation: original, mode };
  }
  deps.afterPersist?.();
  return { kind: 'new', invocation, mode };
}
