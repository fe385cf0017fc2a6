import { Deadlines } from './deadlines';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Deadlines', () => {
  it('calls back each item once its deadline passed, earliest first, and not the ones deleted', async () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const now = performance.now();
    deadlines.add('late', now + 60);
    deadlines.add('early', now + 20);
    deadlines.delete(deadlines.add('deleted', now + 10));
    await sleep(40);
    expect(due).toEqual(['early']);
    await sleep(50);
    expect(due).toEqual(['early', 'late']);
    expect(deadlines.size).toBe(0);
  });

  it('serves every item with one timer, armed again only for an earlier deadline', async () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const set = jest.spyOn(global, 'setTimeout');
    try {
      const now = performance.now();
      deadlines.add('first', now + 200);
      for (let i = 0; i < 100; i++) deadlines.add(`later ${i}`, now + 300 + i);
      expect(set).toHaveBeenCalledTimes(1);
      deadlines.add('earlier', now + 100);
      expect(set).toHaveBeenCalledTimes(2);
      await sleep(50);
      expect(due).toEqual([]);
      deadlines.clear();
    } finally {
      set.mockRestore();
    }
  });

  it('gives every item a ticket of its own: one kept after its item came due deletes nothing else', async () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const first = deadlines.add('heartbeat', performance.now() + 5);
    await sleep(30);
    expect(due).toEqual(['heartbeat']);
    const second = deadlines.add('heartbeat', performance.now() + 20);
    expect(second).not.toBe(first);
    deadlines.delete(first);
    await sleep(50);
    expect(due).toEqual(['heartbeat', 'heartbeat']);
    expect(deadlines.size).toBe(0);
  });

  it('keeps no process alive', () => {
    const deadlines = new Deadlines<string>(() => undefined);
    const set = jest.spyOn(global, 'setTimeout');
    try {
      deadlines.add('a', performance.now() + 1000);
      expect((set.mock.results[0].value as NodeJS.Timeout).hasRef()).toBe(false);
    } finally {
      deadlines.clear();
      set.mockRestore();
    }
  });
});
