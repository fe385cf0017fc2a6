import { createFakeStore } from './fake-store';
import { ManualClock } from './manual-clock';
import { describeStoreContract } from './store.contract';

// The in-memory store of the small tests shows the same behaviour as SQLite and MongoDB.
describeStoreContract('in memory (the small tests)', async () => {
  const clock = new ManualClock();
  const store = createFakeStore(clock);
  return { store, clock, dispose: () => store.close() };
});
