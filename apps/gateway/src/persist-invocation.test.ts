import { Writable } from 'node:stream';
import { GiError, payloadTooLarge } from '@gi/domain';
import type { IdempotencyRecord, Invocation, NewInvocation } from '@gi/domain';
import { createLogger } from '@gi/observability';
import type { AcceptedCall } from './accept-call';
import type { GatewayDeps } from './gateway.deps';
import { persistInvocation, STORE_FAILURE_LOG_WINDOW_MS } from './persist-invocation';

/** Gateway deps whose store refuses every create, and the log lines they write. */
function refusingStore() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const create = async () => {
    throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
  };
  const deps = { store: { invocations: { create } }, logger: createLogger('info', 'test', { destination }) } as unknown as GatewayDeps;
  const accepted = { invocation: { id: 'inv-1', botId: 'acme' } as NewInvocation, mode: 'async', record: null, hasFiles: false } as AcceptedCall;
  return { deps, accepted, lines };
}

describe('persistInvocation when the store refuses writes', () => {
  afterEach(() => jest.useRealTimers());

  it('answers 503 with nothing accepted, and logs the refusals once per window with the count held back', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const { deps, accepted, lines } = refusingStore();
    // A window of its own: the throttle is the process's, and earlier tests may have used one.
    jest.setSystemTime(Date.now() + 10 * STORE_FAILURE_LOG_WINDOW_MS);
    for (let i = 0; i < 25; i++) {
      const refused = await persistInvocation(deps, accepted).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(GiError);
      expect(refused).toMatchObject({ code: 'unavailable' });
    }
    jest.setSystemTime(Date.now() + STORE_FAILURE_LOG_WINDOW_MS);
    await persistInvocation(deps, accepted).catch(() => undefined);
    const failed = lines.filter((line) => line.msg === 'store write failed');
    expect(failed).toEqual([expect.objectContaining({ level: 50, suppressed: 0 }), expect.objectContaining({ level: 50, suppressed: 24 })]);
    expect(failed[0].err).toMatchObject({ message: 'database or disk is full' });
  });
});

/** The key of a call, as stored. */
const record: IdempotencyRecord = { botId: 'acme', key: 'k-1', fingerprint: 'fp-1', invocationId: 'inv-1', createdAt: 0, expireAt: 1 };

/** Gateway deps over a store of one invocation per key, that may refuse with `refusal`; the files deleted and the log kept. */
function keyedStore(options: { holder?: IdempotencyRecord; original?: Invocation; refusal?: Error; failingDelete?: boolean } = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const deleted: string[] = [];
  let persisted = 0;
  const write = async () => {
    if (options.refusal) throw options.refusal;
    return options.holder ?? null;
  };
  const deps = {
    store: { invocations: { create: write, createWithKey: write, get: async () => options.original ?? null } },
    uploads: {
      files: {
        deleteAll: async (invocation: NewInvocation) => {
          if (options.failingDelete) throw new Error('disk gone');
          deleted.push(invocation.id);
        },
      },
    },
    afterPersist: () => persisted++,
    logger: createLogger('info', 'test', { destination }),
  } as unknown as GatewayDeps;
  const accepted = (changes: Partial<AcceptedCall> = {}) =>
    ({ invocation: { id: 'inv-1', botId: 'acme' } as NewInvocation, mode: 'async', record: null, hasFiles: true, ...changes }) as AcceptedCall;
  return { deps, accepted, deleted, lines, persisted: () => persisted };
}

describe('persistInvocation', () => {
  it('stores a new invocation, keeps its files and says it is persisted', async () => {
    const { deps, accepted, deleted, persisted } = keyedStore();
    expect(await persistInvocation(deps, accepted())).toMatchObject({ kind: 'new', mode: 'async' });
    expect(await persistInvocation(deps, accepted({ record }))).toMatchObject({ kind: 'new' });
    expect([deleted, persisted()]).toEqual([[], 2]);
  });

  it('answers a repeat of its key with the invocation the key first created, and removes the repeat\'s files', async () => {
    const original = { id: 'inv-0', botId: 'acme' } as Invocation;
    const { deps, accepted, deleted, persisted } = keyedStore({ holder: { ...record, invocationId: 'inv-0' }, original });
    expect(await persistInvocation(deps, accepted({ record, mode: 'sync' }))).toEqual({ kind: 'repeat', invocation: original, mode: 'sync' });
    expect([deleted, persisted()]).toEqual([['inv-1'], 0]);
  });

  it('refuses the key sent with another request (422), and a key whose invocation expired (404)', async () => {
    const reused = keyedStore({ holder: { ...record, fingerprint: 'fp-other' }, original: {} as Invocation });
    await expect(persistInvocation(reused.deps, reused.accepted({ record: record }))).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    const expired = keyedStore({ holder: record });
    await expect(persistInvocation(expired.deps, expired.accepted({ record: record }))).rejects.toMatchObject({
      code: 'not_found',
      detail: expect.stringContaining('expired'),
    });
    expect([reused.deleted, expired.deleted]).toEqual([['inv-1'], ['inv-1']]);
  });

  it('passes on an invocation too large to store (413), removing its files; a refusal says nothing was accepted', async () => {
    const tooLarge = keyedStore({ refusal: payloadTooLarge('too large') });
    await expect(persistInvocation(tooLarge.deps, tooLarge.accepted())).rejects.toMatchObject({ code: 'payload_too_large', detail: 'too large' });
    expect(tooLarge.deleted).toEqual(['inv-1']);
    const refused = keyedStore({ refusal: new GiError('bad_request', 'Bad request', 'not this one') });
    await expect(persistInvocation(refused.deps, refused.accepted({ hasFiles: false }))).rejects.toMatchObject({
      code: 'unavailable',
      detail: expect.stringContaining('nothing was accepted'),
    });
    expect(refused.deleted).toEqual([]);
  });

  it('leaves the files of a refused call to the sweep when they cannot be removed, and says so', async () => {
    const { deps, accepted, lines } = keyedStore({ refusal: payloadTooLarge('too large'), failingDelete: true });
    await expect(persistInvocation(deps, accepted())).rejects.toMatchObject({ code: 'payload_too_large' });
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'files left for the sweep', invocationId: 'inv-1', err: expect.objectContaining({ message: 'disk gone' }) }));
  });
});
