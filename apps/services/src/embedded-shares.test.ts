import { embeddedProcessCount, processShare } from './embedded-shares';

describe('embeddedProcessCount', () => {
  it('takes --processes, then EMBEDDED_PROCESSES, then the cores', () => {
    expect(embeddedProcessCount(3, { EMBEDDED_PROCESSES: 5 }, 8)).toBe(3);
    expect(embeddedProcessCount(undefined, { EMBEDDED_PROCESSES: 5 }, 8)).toBe(5);
    expect(embeddedProcessCount(undefined, {}, 8)).toBe(8);
    expect(embeddedProcessCount(undefined, {}, 0)).toBe(1);
  });
});

describe('processShare', () => {
  it('splits the executor concurrency and the sandbox threads evenly, rounded up', () => {
    expect(processShare({ EXECUTOR_CONCURRENCY: 64, SANDBOX_WORKERS: 6 }, 4, 8)).toEqual({ EXECUTOR_CONCURRENCY: 16, SANDBOX_WORKERS: 2 });
    expect(processShare({ EXECUTOR_CONCURRENCY: 10, SANDBOX_WORKERS: 3 }, 4, 8)).toEqual({ EXECUTOR_CONCURRENCY: 3, SANDBOX_WORKERS: 1 });
  });

  it('gives the processes as many sandbox threads in all as the cores when none is set', () => {
    expect(processShare({ EXECUTOR_CONCURRENCY: 64 }, 2, 2)).toEqual({ EXECUTOR_CONCURRENCY: 32, SANDBOX_WORKERS: 1 });
    expect(processShare({ EXECUTOR_CONCURRENCY: 64 }, 4, 16)).toEqual({ EXECUTOR_CONCURRENCY: 16, SANDBOX_WORKERS: 4 });
  });

  it('leaves every process at least one of each', () => {
    expect(processShare({ EXECUTOR_CONCURRENCY: 1, SANDBOX_WORKERS: 1 }, 8, 8)).toEqual({ EXECUTOR_CONCURRENCY: 1, SANDBOX_WORKERS: 1 });
  });
});
