import { Deadlines } from './deadlines';

// The subject is which items come due and when, not the clock: fake timers (performance.now included)
// move time exactly, so no margin is needed and a loaded machine cannot reorder anything.
describe('Deadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('calls back each item once its deadline passed, earliest first, and not the ones deleted', () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const now = performance.now();
    deadlines.add('late', now + 60);
    deadlines.add('early', now + 20);
    deadlines.delete(deadlines.add('deleted', now + 10));
    jest.advanceTimersByTime(19);
    expect(due).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(due).toEqual(['early']);
    jest.advanceTimersByTime(39);
    expect(due).toEqual(['early']);
    jest.advanceTimersByTime(1);
    expect(due).toEqual(['early', 'late']);
    expect(deadlines.size).toBe(0);
  });

  it('serves every item with one timer, armed again only for an earlier deadline', () => {
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
      jest.advanceTimersByTime(99);
      expect(due).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(due).toEqual(['earlier']);
      deadlines.clear();
    } finally {
      set.mockRestore();
    }
  });

  it('gives every item a ticket of its own: one kept after its item came due deletes nothing else', () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const first = deadlines.add('heartbeat', performance.now() + 5);
    jest.advanceTimersByTime(5);
    expect(due).toEqual(['heartbeat']);
    const second = deadlines.add('heartbeat', performance.now() + 20);
    expect(second).not.toBe(first);
    deadlines.delete(first);
    jest.advanceTimersByTime(20);
    expect(due).toEqual(['heartbeat', 'heartbeat']);
    expect(deadlines.size).toBe(0);
  });

  it('keeps no process alive', () => {
    // The real timer: whether it holds the process open is its own property, which fake timers do not model.
    jest.useRealTimers();
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

  it('comes back for the earliest item left, whatever the order they were added in', () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    const now = performance.now();
    for (const [item, after] of [['first', 10], ['second', 20], ['third', 30]] as const) deadlines.add(item, now + after);
    jest.advanceTimersByTime(20);
    expect(due).toEqual(['first', 'second']);
  });

  it('forgets every item on clear, and serves items added after', () => {
    const due: string[] = [];
    const deadlines = new Deadlines<string>((item) => due.push(item));
    deadlines.add('cleared', performance.now() + 10);
    deadlines.clear();
    expect(deadlines.size).toBe(0);
    jest.advanceTimersByTime(10);
    expect(due).toEqual([]);
    deadlines.add('after', performance.now() + 30);
    jest.advanceTimersByTime(30);
    expect(due).toEqual(['after']);
  });
});
