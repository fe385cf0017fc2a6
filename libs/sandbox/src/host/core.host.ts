import type { GlobalsModule } from './host-module';
import { MAX_TIMERS } from './timer-queue';

/** Timers and the clock (the bridge adds `load` and `uncaught`, which reach into the engine). */
export const coreModule: GlobalsModule = {
  name: 'core',
  globals: ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'queueMicrotask', 'performance', 'navigator', 'self', 'DOMException'],
  functions: {
    schedule(run, id, delayMs, repeat) {
      if (typeof id !== 'number' || typeof delayMs !== 'number') return;
      // Past the run's deadline a timer can never fire: it waits for the deadline instead.
      if (!run.timers.schedule(id, Math.max(0, delayMs), repeat === true)) {
        run.exceeded(`The connector set more than ${MAX_TIMERS} timers at once; clear the ones it no longer needs.`);
      }
    },
    cancel(run, id) {
      if (typeof id === 'number') run.timers.cancel(id);
    },
    now: (run) => performance.now() - run.startedAt,
    timeOrigin: (run) => run.timeOrigin,
  },
};
