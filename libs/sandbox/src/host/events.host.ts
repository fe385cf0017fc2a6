import type { GlobalsModule } from './host-module';

/**
 * Events and abort signals: all in the sandbox. `AbortSignal.timeout` uses the run's timers (the
 * core module's), and errors listeners throw end the run through the core module's `uncaught`.
 */
export const eventsModule: GlobalsModule = {
  name: 'events',
  globals: ['Event', 'CustomEvent', 'EventTarget', 'AbortController', 'AbortSignal', 'reportError'],
  functions: {},
};
