import { GiError } from '@gi/domain';
import { StorageGuard } from './storage-guard';

/** A file store whose measures the test sets, counting how often they are taken. */
function measured(used: Record<string, number>, free: number) {
  const files = {
    used,
    free,
    measures: 0,
    async usedBytes(botId: string) {
      files.measures++;
      return files.used[botId] ?? 0;
    },
    freeMeasures: 0,
    async freeBytes() {
      files.freeMeasures++;
      return files.free;
    },
  };
  return files;
}

const refusal = async (promise: Promise<unknown>) => promise.then(() => null, (error: GiError) => [error.code, error.detail, error.headers['Retry-After']]);

describe('StorageGuard', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => (now = 0));

  it('refuses an upload of a bot that holds its quota before reading it, and lets other bots upload', async () => {
    const files = measured({ filler: 1000 }, 1e9);
    const guard = new StorageGuard(files, { botQuotaBytes: 1000, freeReserveBytes: 0 }, clock);
    expect(await refusal(guard.open('filler'))).toEqual([
      'insufficient_storage',
      "Bot 'filler' holds its storage quota of 1000 bytes of uploaded files (BOT_STORAGE_QUOTA); files are freed when their invocations expire or the bot is deleted. Nothing was stored.",
      undefined,
    ]);
    expect(await refusal(guard.open('other'))).toBeNull();
  });

  it('stops an upload at the chunk that passes the quota, counting the bot\'s uploads at once and its stored bytes until measured again', async () => {
    const files = measured({}, 1e9);
    const guard = new StorageGuard(files, { botQuotaBytes: 1000, freeReserveBytes: 0 }, clock);
    const first = await guard.open('a');
    const second = await guard.open('a');
    expect(first.take(600)).toBeNull();
    // Two uploads of one bot share its quota while they run.
    expect(second.take(500)?.code).toBe('insufficient_storage');
    expect(second.take(400)).toBeNull();
    first.end(true);
    second.end(false);
    // The stored 600 count before the store is measured again (within 5 s)...
    const third = await guard.open('a');
    expect(third.take(401)?.code).toBe('insufficient_storage');
    third.end(false);
    expect(files.measures).toBe(1);
    // ...and the measure wins after (the files expired meanwhile).
    now += 5000;
    const fourth = await guard.open('a');
    expect(files.measures).toBe(2);
    expect(fourth.take(1000)).toBeNull();
  });

  it('keeps the free-space reserve: refused at once below it, and stopped mid-upload before it is reached', async () => {
    const files = measured({}, 10_000);
    const guard = new StorageGuard(files, { botQuotaBytes: 1e9, freeReserveBytes: 4000 }, clock);
    const upload = await guard.open('a');
    expect(upload.take(5000)).toBeNull();
    const refused = upload.take(1001);
    expect([refused?.code, refused?.headers['Retry-After']]).toEqual(['insufficient_storage', '60']);
    // Another bot's upload meets the same disk.
    const other = await guard.open('b');
    expect(other.take(1001)?.code).toBe('insufficient_storage');
    files.free = 3999;
    now += 1000;
    expect(await refusal(guard.open('c'))).toEqual(['insufficient_storage', 'The service is low on disk space for uploaded files; nothing was stored. Try again later.', '60']);
  });

  it('counts the uploads under way of a bot against its quota, at the start of another and when measured again', async () => {
    const files = measured({ a: 0 }, 1e9);
    const guard = new StorageGuard(files, { botQuotaBytes: 1000, freeReserveBytes: 0 }, clock);
    const first = await guard.open('a');
    expect(first.take(1000)).toBeNull();
    expect((await refusal(guard.open('a')))?.[0]).toBe('insufficient_storage');
    // Measured again with half of the upload on disk already: counted once, as being received.
    files.used.a = 500;
    now += 5000;
    expect((await refusal(guard.open('a')))?.[0]).toBe('insufficient_storage');
    first.end(false);
    first.end(false);
    // Not stored: its bytes count no more, ended twice or not.
    const second = await guard.open('a');
    expect(second.take(1000)).toBeNull();
    expect(second.take(1)?.detail).toContain('BOT_STORAGE_QUOTA');
  });

  it('lets an upload take the disk down to its reserve exactly, and measures the free space at most every second', async () => {
    const files = measured({}, 10_000);
    const guard = new StorageGuard(files, { botQuotaBytes: 1e9, freeReserveBytes: 4000 }, clock);
    now = 10_000;
    const upload = await guard.open('a');
    expect(upload.take(6000)).toBeNull();
    expect(upload.take(1)?.detail).toContain('low on disk space');
    now += 999;
    await guard.open('b');
    expect(files.freeMeasures).toBe(1);
    files.free = 4000;
    now += 1;
    await guard.open('b');
    expect(files.freeMeasures).toBe(2);
  });

  it('checks only the quota with a file store that cannot tell its free space', async () => {
    const guard = new StorageGuard({ usedBytes: async () => 0 }, { botQuotaBytes: 100, freeReserveBytes: 1e12 }, clock);
    const upload = await guard.open('a');
    expect(upload.take(100)).toBeNull();
    expect(upload.take(1)?.detail).toContain('BOT_STORAGE_QUOTA');
  });
});
