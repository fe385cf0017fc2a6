import type { TokenService } from '@gi/auth';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import type { Clock, CompletionWaiter, PlatformVersion, Store, WaitLimit } from '@gi/domain';

export interface ResultsSettings {
  platformSegment: string;
  platformVersion: PlatformVersion;
  defaultWaitSeconds: number;
}

export interface ResultsDeps {
  store: Store;
  tokens: TokenService;
  /** Fed with the bus's completion events by the composition root. */
  waiter: CompletionWaiter<CompletionEvent>;
  /** Where a caller's cancellation is announced. */
  bus: Pick<JobBus, 'publishCancel' | 'publishCompletion'>;
  clock: Clock;
  settings: ResultsSettings;
  /** The long polls each bot may hold waiting in this process (shared with the gateway's sync calls); no limit when absent. */
  waits?: WaitLimit;
}
