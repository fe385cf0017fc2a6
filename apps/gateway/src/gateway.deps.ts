import type { TokenService } from '@gi/auth';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import type { Clock, CompletionWaiter, PlatformVersion, Store, WaitLimit } from '@gi/domain';
import type { BodyTimeouts } from '@gi/http';
import type { Logger } from '@gi/observability';
import type { QuotaGate } from './quota-gate';
import type { Uploads } from './receive-files';

export interface GatewaySettings {
  platformSegment: string;
  platformVersion: PlatformVersion;
  syncTimeoutMs: number;
  maxBodyBytes: number;
  /** How long a client may take to send a text body. */
  bodyTimeouts: BodyTimeouts;
  /** The deepest nesting of arrays and objects a JSON body (or JSON form field) may have. */
  maxJsonDepth: number;
  invocationTtlMs: number;
  /** How long an Idempotency-Key holds its request and outcome. */
  idempotencyKeyTtlMs: number;
}

export interface GatewayDeps {
  store: Store;
  bus: JobBus;
  tokens: TokenService;
  /** Fed with the bus's completion events by the composition root. */
  waiter: CompletionWaiter<CompletionEvent>;
  clock: Clock;
  logger: Logger;
  settings: GatewaySettings;
  /** Rate and in-flight quotas of bots and tokens; none when absent. */
  quotas?: QuotaGate;
  /** The sync calls each bot may hold waiting in this process (shared with the results service's long polls); no limit when absent. */
  waits?: WaitLimit;
  /** The file store and limits of GenericIntegrationFileTransfer; without them the endpoint answers 501. */
  uploads?: Uploads;
  /** Recovery tests only: called between the store write and the publish. */
  afterPersist?: () => void;
}
