import { Writable } from 'node:stream';
import type { JobMessage } from '@gi/contracts';
import { createLogger } from '@gi/observability';
import { UnpublishedJobs } from './unpublished-jobs';

const job = (invocationId: string): JobMessage => ({ kind: 'job', version: 1, botId: 'acme', invocationId, pool: 'default' });

function kept(options: { capacity?: number; whilePublishing?: (invocationId: string) => void } = {}) {
  let now = 1_000_000;
  const published: string[] = [];
  const failing = new Set<string>();
  const bus = {
    publish: async (message: JobMessage) => {
      options.whilePublishing?.(message.invocationId);
      if (failing.has(message.invocationId)) throw new Error('The message broker is not reachable.');
      published.push(message.invocationId);
    },
  };
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const logger = createLogger('info', 'test', { destination });
  const jobs = new UnpublishedJobs({ bus, clock: { now: () => now }, logger, maxAgeMs: 60_000, capacity: options.capacity });
  return { jobs, published, failing, lines, later: (ms: number) => (now += ms) };
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

  it('publishes a job as old as the sweepers\' republish age, not one a millisecond older', async () => {
    const { jobs, published, later } = kept();
    jobs.add(job('older'));
    later(1);
    jobs.add(job('oldest kept'));
    later(60_000);
    await jobs.republish();
    expect([published, jobs.size]).toEqual([['oldest kept'], 0]);
  });

  it('publishes each of more jobs than one batch once', async () => {
    const { jobs, published } = kept();
    const ids = Array.from({ length: 450 }, (_, i) => `job-${i}`);
    for (const id of ids) jobs.add(job(id));
    await jobs.republish();
    expect(published.sort()).toEqual([...ids].sort());
  });

  it('logs what it published and kept, and nothing when it kept nothing', async () => {
    const { jobs, failing, lines } = kept();
    await jobs.republish();
    expect(lines).toEqual([]);
    for (const id of ['a', 'b', 'c']) jobs.add(job(id));
    failing.add('c');
    await jobs.republish();
    expect(lines).toEqual([expect.objectContaining({ msg: 'jobs whose publish failed were published again', published: 2, kept: 1 })]);
  });

  it('keeps the newer failure of a job that failed again while it was being published', async () => {
    let failsAgain = true;
    const { jobs, published, failing, later } = kept({
      whilePublishing: () => {
        if (!failsAgain) return;
        failsAgain = false;
        later(30_000);
        jobs.add(job('a'));
      },
    });
    jobs.add(job('a'));
    failing.add('a');
    await jobs.republish();
    later(40_000);
    failing.clear();
    await jobs.republish();
    expect([published, jobs.size]).toEqual([['a'], 0]);
  });
});
