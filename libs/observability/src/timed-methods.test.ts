import { Histogram, Registry } from 'prom-client';
import { timedMethods } from './timed-methods';

class Repo {
  private calls = 0;
  async get(id: string) {
    this.calls++;
    return `${id}:${this.calls}`;
  }
  async fail(): Promise<never> {
    throw new Error('down');
  }
  count() {
    return this.calls;
  }
}

describe('timedMethods', () => {
  it('times each method by operation and outcome, calling it on the original object', async () => {
    const histogram = new Histogram({ name: 'op_seconds', help: 'h', labelNames: ['operation', 'outcome'] as const, registers: [new Registry()] });
    const repo = timedMethods(new Repo(), 'repo', histogram);
    expect(await repo.get('a')).toBe('a:1');
    expect(await repo.get('b')).toBe('b:2');
    await expect(repo.fail()).rejects.toThrow('down');
    expect(repo.count()).toBe(2);
    const counts = (await histogram.get()).values.filter((v) => (v as { metricName?: string }).metricName === 'op_seconds_count' && v.value > 0);
    expect(counts.map((v) => [v.labels.operation, v.labels.outcome, v.value])).toEqual(
      expect.arrayContaining([
        ['repo.get', 'ok', 2],
        ['repo.fail', 'error', 1],
        ['repo.count', 'ok', 1],
      ]),
    );
  });
});
