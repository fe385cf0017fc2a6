import { COMPLETION_PARTITIONS, completionPartition, PartitionInterest } from './completion-partitions';

/** Records what the interest binds and unbinds; binding resolves when the test says so. */
function recordingBinder() {
  const calls: string[] = [];
  let releaseBind: () => void = () => undefined;
  let holdBinds = false;
  return {
    calls,
    hold() {
      holdBinds = true;
    },
    finishBinds() {
      holdBinds = false;
      releaseBind();
    },
    binder: {
      bind: (key: string) => {
        calls.push(`bind ${key}`);
        return holdBinds ? new Promise<void>((resolve) => (releaseBind = resolve)) : Promise.resolve();
      },
      unbind: async (key: string) => void calls.push(`unbind ${key}`),
    },
  };
}

describe('completion partitions', () => {
  it('maps an invocation id to one stable key among the partitions, spreading ids over all of them', () => {
    expect(completionPartition('inv-1')).toBe(completionPartition('inv-1'));
    const keys = new Set(Array.from({ length: 2000 }, (_, i) => completionPartition(`inv-${i}`)));
    expect(keys.size).toBe(COMPLETION_PARTITIONS);
    expect([...keys].every((key) => /^p\d+$/.test(key))).toBe(true);
  });

  it('binds a partition once for many waits, and unbinds it only after it lingered unused', async () => {
    jest.useFakeTimers();
    try {
      const { calls, binder } = recordingBinder();
      const interest = new PartitionInterest(binder, 1000);
      const key = completionPartition('a');
      const first = await interest.watch('a', null);
      const second = await interest.watch('a', null);
      expect(calls).toEqual([`bind ${key}`]);
      first.release();
      second.release();
      second.release();
      jest.advanceTimersByTime(500);
      const third = await interest.watch('a', null);
      jest.advanceTimersByTime(1000);
      expect(calls).toEqual([`bind ${key}`]);
      third.release();
      jest.advanceTimersByTime(1000);
      expect(calls).toEqual([`bind ${key}`, `unbind ${key}`]);
      expect(interest.keys()).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('lets a second wait of a partition being bound wait for that binding too', async () => {
    const recorder = recordingBinder();
    recorder.hold();
    const interest = new PartitionInterest(recorder.binder, 1000);
    let secondReady = false;
    const first = interest.watch('a', null);
    void interest.watch('a', null).then(() => (secondReady = true));
    await Promise.resolve();
    await Promise.resolve();
    expect(secondReady).toBe(false);
    recorder.finishBinds();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondReady).toBe(true);
    expect(recorder.calls).toHaveLength(1);
  });

  it('binds nothing for a wait expecting a direct reply, until the connection is lost', async () => {
    const { calls, binder } = recordingBinder();
    const interest = new PartitionInterest(binder, 1000);
    const promoted: string[] = [];
    const standby = (id: string) => ({ onPromoted: () => promoted.push(`${id} after ${calls.length} binding(s)`) });
    const standing = await interest.watch('sync-call', standby('sync-call'));
    const done = await interest.watch('other', standby('other'));
    done.release();
    expect(calls).toEqual([]);
    await interest.promoteStandby();
    expect(calls).toEqual([`bind ${completionPartition('sync-call')}`]);
    // Told once its partition is bound (its waiter then asks the store for the event), the released one never.
    expect(promoted).toEqual(['sync-call after 1 binding(s)']);
    await interest.promoteStandby();
    expect(promoted).toHaveLength(1);
    standing.release();
    interest.clear();
  });

  it('promotes the waits of one invocation whose job was not published with its reply address', async () => {
    const { calls, binder } = recordingBinder();
    const interest = new PartitionInterest(binder, 1000);
    const promoted: string[] = [];
    const mine = await interest.watch('unpublished', { onPromoted: () => promoted.push('unpublished') });
    const other = await interest.watch('published', { onPromoted: () => promoted.push('published') });
    await interest.promoteStandbyOf('unpublished');
    expect(calls).toEqual([`bind ${completionPartition('unpublished')}`]);
    expect(promoted).toEqual(['unpublished']);
    mine.release();
    other.release();
    interest.clear();
  });
});
