import type { JobMessage } from '@gi/contracts';
import { createLogger } from '@gi/observability';
import { UnpublishedJobs } from './unpublished-jobs';

const job = (invocationId: string): JobMessage => ({ kind: 'job', version: 1, botId: 'acme', invocationId, pool: 'default' });

function kept(options: { capacity?: number } = {}) {
  let now = 1_000_000;
  const published: string[] = [];
  const failing = new Set<string>();
  const bus = {
    publish: async (message: JobMessage) => {
      if (failing.has(message.invocationId)) throw new Error('The message broker is not reachable.');
      published.push(message.invocationId);
    },
  };
  const jobs = new UnpublishedJobs({ bus, clock: { now: () => now }, logger: createLogger('silent', 'test'), maxAgeMs: 60_000, ...options });
  return { jobs, published, failing, later: (ms: number) => (now += ms) };
}

describe('UnpublishedJobs', () => {
  it('publishes every job kept once the broker is back, each once, and keeps none', async () => {
    const { jobs, published } = kept();
    for (const id of ['a', 'b', 'a', 'c']) jobs.add(job(id));
    await jobs.republish();
    expect(published.sort()).toEqual(['a', 'b', 'c']);
    expect(jobs.size).toBe(0);
    await jobs.republish();
    expect(published).toHaveLength(3);
  });

  it('keeps a job whose publish fails again for the next reconnect', async () => {
    const { jobs, published, failing } = kept();
    jobs.add(job('a'));
    jobs.add(job('b'));
    failing.add('b');
    await jobs.republish();
    expect([published, jobs.size]).toEqual([['a'], 1]);
    failing.clear();
    await jobs.republish();
    expect(published).toEqual(['a', 'b']);
  });

  it('leaves to the sweepers what is older than their republish age, and the oldest beyond its capacity', async () => {
    const { jobs, published, later } = kept({ capacity: 2 });
    jobs.add(job('old'));
    later(61_000);
    for (const id of ['x', 'y', 'z']) jobs.add(job(id));
    expect(jobs.size).toBe(2);
    await jobs.republish();
    expect(published.sort()).toEqual(['y', 'z']);
  });
});
