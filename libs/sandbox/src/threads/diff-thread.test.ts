import { DEFAULT_CONNECTOR_LIMITS, diffVersions } from '@gi/domain';
import { DiffThread } from './diff-thread';

const base = { entityName: 'Order', pool: 'default', timeoutSeconds: 60, allowedHosts: [], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };
const one = { ...base, version: 1, code: 'a\nb\nc\n', sources: [{ path: 'src/index.ts', content: 'x\n' }] };
const two = { ...base, version: 2, code: 'a\nB\nc\n', timeoutSeconds: 30, sources: [{ path: 'src/index.ts', content: 'y\n' }] };

describe('DiffThread', () => {
  const thread = new DiffThread();
  afterAll(() => thread.close());

  it('answers on a thread of its own what the diff on this thread answers, as JSON', async () => {
    expect(thread.threaded).toBe(true);
    expect(JSON.parse(await thread.diffJson(one, two))).toEqual(await diffVersions(one, two));
  });

  it('answers diffs asked at once, each its own', async () => {
    const [forward, back] = await Promise.all([thread.diffJson(one, two), thread.diffJson(two, one)]);
    expect(JSON.parse(forward)).toMatchObject({ from: 1, to: 2 });
    expect(JSON.parse(back)).toMatchObject({ from: 2, to: 1, code: expect.stringContaining('-B\n+b') });
  });

  it('fails the diffs waiting when its thread ends, and starts a new thread for the next', async () => {
    // Two versions with no line in common: the diff takes the thread far longer than ending it does,
    // so it is still under way when the thread ends (a small one could be answered first).
    const lines = (tag: string) => Array.from({ length: 5_000 }, (_, i) => `${tag} ${i}`).join('\n');
    const waiting = thread.diffJson({ ...one, code: lines('a') }, { ...two, code: lines('b') });
    await thread.close();
    await expect(waiting).rejects.toThrow('The diff thread ended.');
    expect(JSON.parse(await thread.diffJson(one, two))).toMatchObject({ from: 1, to: 2 });
  });

  it('diffs on the calling thread when no worker entry can be found', async () => {
    const inThread = new DiffThread(null);
    expect(inThread.threaded).toBe(false);
    expect(JSON.parse(await inThread.diffJson(one, two))).toEqual(await diffVersions(one, two));
  });
});
