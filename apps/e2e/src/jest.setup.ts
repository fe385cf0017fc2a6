// End-to-end tests start real processes and wait on real timers.
jest.setTimeout(60_000);
