import { Writable } from 'node:stream';
import type { JobMessage, PublishOptions } from '@gi/contracts';
import { createLogger } from '@gi/observability';
import type { GatewayDeps } from './gateway.deps';
import { publishJob } from './publish-job';

/** A bus that records each publish with its options, refusing them while `down`; the jobs kept and the log lines. */
function broker() {
  const published: Array<{ job: JobMessage; options: PublishOptions | undefined }> = [];
  const kept: JobMessage[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const state = { down: false };
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const bus = {
    publish: async (job: JobMessage, options?: PublishOptions) => {
      if (state.down) throw new Error('The message broker is not reachable.');
      published.push({ job, options });
    },
  };
  const deps = { bus, logger: createLogger('info', 'test', { destination }), unpublished: { add: (job: JobMessage) => void kept.push(job) } } as unknown as GatewayDeps;
  return { deps, published, kept, lines, state };
}

const invocation = (id: string, mode: 'sync' | 'async') => ({ botId: 'acme', id, pool: 'reports', mode });

describe('publishJob', () => {
  afterEach(() => jest.useRealTimers());

  it('publishes the job of the invocation; a sync one awaits the reply, both carry the backlog', async () => {
    const { deps, published, kept } = broker();
    await publishJob(deps, invocation('inv-s', 'sync'), 3);
    await publishJob(deps, invocation('inv-a', 'async'));
    expect(published).toEqual([
      { job: { kind: 'job', version: 1, botId: 'acme', invocationId: 'inv-s', pool: 'reports' }, options: { awaitReply: true, backlog: 3 } },
      { job: { kind: 'job', version: 1, botId: 'acme', invocationId: 'inv-a', pool: 'reports' }, options: { awaitReply: false, backlog: undefined } },
    ]);
    expect(kept).toEqual([]);
  });

  it('keeps a job the broker refuses to publish again, and logs the refusals once per window with the count held back', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const { deps, published, kept, lines, state } = broker();
    state.down = true;
    // A window of its own: the throttle is the process's.
    jest.setSystemTime(Date.now() + 100_000);
    for (const id of ['inv-1', 'inv-2', 'inv-3']) await expect(publishJob(deps, invocation(id, 'async'))).resolves.toBeUndefined();
    jest.setSystemTime(Date.now() + 9_999);
    await publishJob(deps, invocation('inv-4', 'async'));
    jest.setSystemTime(Date.now() + 1);
    await publishJob(deps, invocation('inv-5', 'sync'));
    expect(published).toEqual([]);
    expect(kept.map((job) => job.invocationId)).toEqual(['inv-1', 'inv-2', 'inv-3', 'inv-4', 'inv-5']);
    const warned = lines.filter((line) => line.msg === 'publish failed; the job is published again once the broker is back');
    expect(warned).toEqual([
      expect.objectContaining({ level: 40, invocationId: 'inv-1', suppressed: 0 }),
      expect.objectContaining({ level: 40, invocationId: 'inv-5', suppressed: 3 }),
    ]);
    expect(warned[0].err).toMatchObject({ message: 'The message broker is not reachable.' });
    expect(lines).toHaveLength(2);
  });

  it('does not fail the call when nothing keeps unpublished jobs', async () => {
    const { deps, state } = broker();
    state.down = true;
    await expect(publishJob({ ...deps, unpublished: undefined }, invocation('inv-1', 'sync'))).resolves.toBeUndefined();
  });
});
