import { killLeftoverServices } from './service-process';

// End-to-end tests start real processes and wait on real timers.
jest.setTimeout(60_000);

// A test that fails before its cleanup must not leave services running: they would hold the run open.
afterAll(killLeftoverServices);
