import { MongoError, MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoWriteConcernError } from 'mongodb';
import { GiError, unavailable } from '@gi/domain';

/** E11000: the write would break a unique index (a reused invocation id, a version taken concurrently). */
export const isDuplicateKey = (error: unknown): boolean => error instanceof MongoServerError && error.code === 11000;

/**
 * Codes of a member that is not (or no longer) the primary, or is shutting down: the driver's
 * not-writable-primary and node-is-recovering sets. The server labels them RetryableWriteError only on
 * retryable writes, so multi-document writes are told by the code.
 */
const NOT_PRIMARY_CODES = new Set([
  10107, // NotWritablePrimary
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
  10058, // LegacyNotPrimary
  189, // PrimarySteppedDown
  11602, // InterruptedDueToReplStateChange
  91, // ShutdownInProgress
  11600, // InterruptedAtShutdown
]);
/** The server's "document too large": on insert (BSONObjectTooLarge) and on update (older servers' codes). */
const TOO_LARGE_CODES = new Set([10334, 17419, 17420]);

/** A write that failed on a failover or a lost connection: sent again, it finds the new primary. */
export function isFailover(error: unknown): boolean {
  if (error instanceof MongoNetworkError) return true;
  if (!(error instanceof MongoServerError)) return false;
  return error.hasErrorLabel('RetryableWriteError') || NOT_PRIMARY_CODES.has(Number(error.code));
}

/**
 * The store could not do what was asked now, and may later: no primary within the server-selection
 * time, a failover or a lost connection, a majority that did not confirm a write in time
 * (MongoWriteConcernError: the write stays on the primary unless undone), a transaction the server
 * asks to retry or whose commit is unknown.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof MongoServerSelectionError || error instanceof MongoWriteConcernError || isFailover(error)) return true;
  if (!(error instanceof MongoError)) return false;
  return (
    error.hasErrorLabel('TransientTransactionError') ||
    error.hasErrorLabel('UnknownTransactionCommitResult') ||
    [6, 7, 89, 262, 9001, 134, 50].includes(Number(error.code)) // host unreachable or not found, network timeout, time limits, socket, majority read not yet available
  );
}

/** The server refused a document over its size limit (16 MiB). */
export const isTooLarge = (error: unknown): boolean => error instanceof MongoServerError && TOO_LARGE_CODES.has(Number(error.code));

/** What callers of any service get while the store cannot answer: 503 with Retry-After (problem details). */
export function storeUnavailable(cause: unknown): GiError {
  const error = unavailable('The store is not answering (no primary, or the replica set did not confirm in time); try again shortly.');
  return Object.assign(error, { cause });
}

/**
 * `target` with every method's failures that mean "the store cannot answer now" turned into
 * storeUnavailable, so every service answers them alike (503 with Retry-After) instead of as an
 * unexpected error (500). Other errors pass unchanged.
 */
export function withUnavailability<T extends object>(target: T): T {
  const translate = (error: unknown): never => {
    throw isUnavailable(error) && !(error instanceof GiError) ? storeUnavailable(error) : error;
  };
  return new Proxy(target, {
    get(object, name) {
      const member = Reflect.get(object, name, object) as unknown;
      if (typeof member !== 'function') return member;
      return (...args: unknown[]) => {
        try {
          const result = (member as (...a: unknown[]) => unknown).apply(object, args);
          return result instanceof Promise ? result.catch(translate) : result;
        } catch (error) {
          return translate(error);
        }
      };
    },
  });
}

/**
 * Runs an idempotent multi-document write (updateMany, deleteMany), and once more when a failover or a
 * lost connection cut it short: the server retries only single-document writes itself. Running it
 * again finishes what the first try left, since each such write re-checks its filter per document.
 */
export async function retriedOnFailover<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!isFailover(error)) throw error;
    return write();
  }
}
