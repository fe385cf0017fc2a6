import { Deadlines } from './deadlines';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Deadlines', () => {
  it('calls back each item once its deadline passed, earliest first, and not the ones deleted', async () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const now = performance.now();
    deadlines.add('late', now + 60);
    deadlines.add('early', now + 20);
    deadlines.add('deleted', now + 10);
    deadlines.delete('deleted');
    await sleep(40);
    expect(due).toEqual(['early']);
    await sleep(50);
    expect(due).toEqual(['early', 'late']);
    expect(deadlines.size).toBe(0);
  });

  it('moves the deadline of an item added again, and one timer serves them all', async () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const set = jest.spyOn(global, 'setTimeout');
    try {
      const now = performance.now();
      deadlines.add('moved', now + 10);
      deadlines.add('moved', now + 200);
      for (let i = 0; i < 100; i++) deadlines.add(`later ${i}`, now + 300 + i);
      // Armed once for the first deadline; nothing later sets it again.
      expect(set).toHaveBeenCalledTimes(1);
      await sleep(50);
      expect(due).toEqual([]);
      deadlines.clear();
    } finally {
      set.mockRestore();
    }
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
