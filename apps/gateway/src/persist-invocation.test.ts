import { Writable } from 'node:stream';
import { GiError } from '@gi/domain';
import type { NewInvocation } from '@gi/domain';
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
