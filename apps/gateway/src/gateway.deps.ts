import type { TokenService } from '@gi/auth';
import type { Clock, CompletionWaiter, JobBus, PlatformVersion, Store } from '@gi/domain';
import type { Logger } from '@gi/http';
import type { QuotaGate } from './quota-gate';
import type { Uploads } from './receive-files';

export interface GatewaySettings {
  platformSegment: string;
  platformVersion: PlatformVersion;
  syncTimeoutMs: number;
  maxBodyBytes: number;
  invocationTtlMs: number;
  /** How long an Idempotency-Key holds its request and outcome. */
  idempotencyKeyTtlMs: number;
}

export interface GatewayDeps {
  store: Store;
  bus: JobBus;
  tokens: TokenService;
  /** Fed with the bus's completion events by the composition root. */
  waiter: CompletionWaiter;
  clock: Clock;
  logger: Logger;
  settings: GatewaySettings;
  /** Rate and in-flight quotas of bots and tokens; none when absent. */
  quotas?: QuotaGate;
  /** The file store and limits of GenericIntegrationFileTransfer; without them the endpoint answers 501. */
  uploads?: Uploads;
  /** Recovery tests only: called between the store write and the publish. */
  afterPersist?: () => void;
}
