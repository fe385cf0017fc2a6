import { LruMap } from '@gi/domain';

/**
 * A connector's code crosses to a sandbox thread once, not with every run: a bundle of a few hundred
 * kilobytes copied into each run's message (and compared there with the code its sandboxes were made
 * for) cost more than the run itself. The pool numbers each code it sees (`CodeIds`); a run message
 * names its code by cache key and number and carries the text only when the thread has not been sent
 * it (`SentCodes`). The thread keeps what it was sent (`ThreadCodes`) and asks for the text of a run
 * whose code it lacks, so what the two sides remember is only ever a guess at the other's: a wrong
 * guess costs one round trip, never a run of the wrong code.
 */

/** Codes a thread keeps, and the pool remembers having sent to each thread. */
export const CODES_PER_THREAD = 32;
/** Codes numbered by the pool (the number of a code forgotten here is not reused: a new one is drawn). */
const NUMBERED_CODES = 1024;

/** The pool's numbers for codes: one per distinct code of a cache key (a key may come back with other code). */
export class CodeIds {
  private readonly numbered = new LruMap<string, { code: string; id: number }>(NUMBERED_CODES);
  private next = 1;

  idOf(cacheKey: string, code: string): number {
    const known = this.numbered.get(cacheKey);
    // The same string each run of a version (the executor keeps its definition): compared by reference first.
    if (known && known.code === code) return known.id;
    const id = this.next++;
    this.numbered.set(cacheKey, { code, id });
    return id;
  }
}

/** What the pool sent one thread: the number of the code last sent under each cache key. */
export class SentCodes {
  private readonly sent = new LruMap<string, number>(CODES_PER_THREAD);

  /** Whether the thread was sent this code; noted as sent from now on either way. */
  sentBefore(cacheKey: string, codeId: number): boolean {
    if (this.sent.get(cacheKey) === codeId) return true;
    this.sent.set(cacheKey, codeId);
    return false;
  }

  /** The text of this code did not reach the thread (its message could not be posted). */
  lost(cacheKey: string): void {
    this.sent.delete(cacheKey);
  }
}

/** The codes a sandbox thread was sent, by cache key. */
export class ThreadCodes {
  private readonly kept = new LruMap<string, { id: number; code: string }>(CODES_PER_THREAD);

  learn(cacheKey: string, codeId: number, code: string): void {
    this.kept.set(cacheKey, { id: codeId, code });
  }

  /** The code numbered `codeId`; undefined when this thread does not have it (never sent, or forgotten). */
  get(cacheKey: string, codeId: number): string | undefined {
    const kept = this.kept.get(cacheKey);
    return kept?.id === codeId ? kept.code : undefined;
  }
}
