import type { Store } from '@gi/domain';
import type { ManualClock } from './manual-clock';

/** A store adapter opened for one contract test, on a clock the test moves. */
export interface StoreUnderTest {
  store: Store;
  clock: ManualClock;
  /** Closes the store and removes what the test created. */
  dispose(): Promise<void>;
}
