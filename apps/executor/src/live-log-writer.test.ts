import type { LogBatch, LogLine } from '@gi/domain';
import { LiveLogWriter } from './live-log-writer';

const line = (message: string): LogLine => ({ at: 1, level: 'info', message });
const messages = (batch: LogBatch) => batch.lines.map((l) => l.message);

/** A store's appendLogs the test answers by hand, one write at a time. */
function scriptedStore() {
  const writes: Array<{ batch: LogBatch; answer: (held: boolean) => void; fail: (error: Error) => void }> = [];
  const append = (batch: LogBatch) => new Promise<boolean>((resolve, reject) => writes.push({ batch, answer: resolve, fail: reject }));
  return { writes, append };
}

describe('LiveLogWriter', () => {
  let now: number;
  const errors: unknown[] = [];
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate'] });
    now = 0;
    errors.length = 0;
  });
  afterEach(() => jest.useRealTimers());

  const writer = (append: (batch: LogBatch) => Promise<boolean>) =>
    new LiveLogWriter({ attempt: 2, append, onError: (error) => errors.push(error), intervalMs: 1000, now: () => now });
  const advance = async (ms: number) => {
    now += ms;
    jest.advanceTimersByTime(ms);
    await settle();
  };

  it('writes the first lines at once, then at most one write a second, never two at once, each taking every line waiting', async () => {
    const { writes, append } = scriptedStore();
    const log = writer(append);
    log.offer([line('a')]);
    expect(writes.map((w) => [w.batch.attempt, w.batch.seq, messages(w.batch)])).toEqual([[2, 0, ['a']]]);
    log.offer([line('b')]);
    log.offer([line('c'), line('d')]);
    await advance(1500);
    expect(writes).toHaveLength(1); // the first write is still under way
    writes[0].answer(true);
    await settle();
    expect(writes.map((w) => messages(w.batch))).toEqual([['a'], ['b', 'c', 'd']]);
    writes[1].answer(true);
    await settle();
    log.offer([line('e')]);
    await advance(999);
    expect(writes).toHaveLength(2);
    await advance(1);
    expect(writes.map((w) => [w.batch.seq, messages(w.batch)])).toEqual([[0, ['a']], [1, ['b', 'c', 'd']], [2, ['e']]]);
    writes[2].answer(true);
    expect(await log.close()).toEqual([]);
  });

  it('tries a failed batch again as it was, before the lines that came since, and says so at warn only', async () => {
    const { writes, append } = scriptedStore();
    const log = writer(append);
    log.offer([line('a')]);
    writes[0].fail(new Error('store down'));
    await settle();
    expect(errors).toHaveLength(1);
    log.offer([line('b')]);
    await advance(1000);
    expect(writes[1].batch).toEqual(writes[0].batch);
    writes[1].answer(true);
    await settle();
    await advance(1000);
    expect(writes.map((w) => [w.batch.seq, messages(w.batch)])).toEqual([[0, ['a']], [0, ['a']], [1, ['b']]]);
    writes[2].answer(true);
    expect(await log.close()).toEqual([]);
  });

  it('waits at close for the write under way, and gives back what was not written for the outcome to record', async () => {
    const { writes, append } = scriptedStore();
    const log = writer(append);
    log.offer([line('a')]);
    log.offer([line('b')]);
    let closed: LogLine[] | null = null;
    const closing = log.close().then((rest) => (closed = rest));
    await settle();
    expect(closed).toBeNull();
    writes[0].answer(true);
    await closing;
    expect(closed).toEqual([line('b')]);
    log.offer([line('late')]);
    await advance(5000);
    expect(writes).toHaveLength(1);
  });

  it('at close, sends a batch that failed once more (stored once at most), and gives its lines back if that fails too', async () => {
    const stored: LogBatch[] = [];
    let down = true;
    const log = writer(async (batch) => {
      if (down) throw new Error('store down');
      stored.push(batch);
      return true;
    });
    log.offer([line('a')]);
    await settle();
    log.offer([line('b')]);
    expect(await log.close()).toEqual([line('a'), line('b')]);
    const again = writer(async (batch) => {
      if (down) {
        down = false;
        throw new Error('store down');
      }
      stored.push(batch);
      return true;
    });
    down = true;
    again.offer([line('c')]);
    await settle();
    expect(await again.close()).toEqual([]);
    expect(stored.map(messages)).toEqual([['c']]);
  });

  it('writes nothing more once the store says the lease is gone', async () => {
    const { writes, append } = scriptedStore();
    const log = writer(append);
    log.offer([line('a')]);
    writes[0].answer(false);
    await settle();
    log.offer([line('b')]);
    await advance(5000);
    expect(writes).toHaveLength(1);
    await log.close();
    expect(writes).toHaveLength(1);
  });

  it('at flush (a run that suspends), writes what is left and the lines given as one last batch, after the write under way', async () => {
    const { writes, append } = scriptedStore();
    const log = writer(append);
    log.offer([line('a')]);
    log.offer([line('b')]);
    let flushed: boolean | null = null;
    const flushing = log.flush([line('c')]).then((ok) => (flushed = ok));
    await settle();
    expect(writes.map((w) => messages(w.batch))).toEqual([['a']]);
    writes[0].answer(true);
    await settle();
    expect(writes.map((w) => [w.batch.seq, messages(w.batch)])).toEqual([
      [0, ['a']],
      [1, ['b', 'c']],
    ]);
    expect(flushed).toBeNull();
    writes[1].answer(true);
    await flushing;
    expect(flushed).toBe(true);
  });

  it('at flush, says the lines could not all be stored when the lease is gone or the last write fails', async () => {
    const gone = scriptedStore();
    const lost = writer(gone.append);
    const lostFlush = lost.flush([line('a')]);
    await settle();
    gone.writes[0].answer(false);
    expect(await lostFlush).toBe(false);

    const failing = scriptedStore();
    const failed = writer(failing.append);
    const failedFlush = failed.flush([line('a')]);
    await settle();
    failing.writes[0].fail(new Error('store down'));
    expect(await failedFlush).toBe(false);
    expect(errors).toHaveLength(1);
  });

  it('at flush with nothing to write, writes nothing', async () => {
    const { writes, append } = scriptedStore();
    expect(await writer(append).flush([])).toBe(true);
    expect(writes).toHaveLength(0);
  });
});
