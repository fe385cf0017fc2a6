import type { SecretVault, TokenService } from '@gi/auth';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import type { Clock, CompletionWaiter, JournalLimits, PlatformVersion, Store } from '@gi/domain';
import type { BodyTimeouts } from '@gi/http';
import type { Logger } from '@gi/observability';
import type { QuotaGate } from './quota-gate';
import type { Uploads } from './receive-files';
import type { UnpublishedJobs } from './unpublished-jobs';

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
  /** The limits of a durable run's journal: an event's payload, and the events kept for one invocation. */
  journalLimits: JournalLimits;
  /** PUBLIC_BASE_URL: the URL the inbound schemes that sign it (HubSpot v3, Twilio) are rebuilt from; never `Host`. */
  publicBaseUrl?: string;
}

export interface GatewayDeps {
  store: Store;
  bus: JobBus;
  tokens: TokenService;
  /** The keys of the integrations' inbound schemes (connector secrets); without it a signed call finds no key (401). */
  secrets?: Pick<SecretVault, 'valuesOf'>;
  /** Fed with the bus's completion events by the composition root. */
  waiter: CompletionWaiter<CompletionEvent>;
  clock: Clock;
  logger: Logger;
  settings: GatewaySettings;
  /** Rate and in-flight quotas of bots and tokens; none when absent. */
  quotas?: QuotaGate;
  /** The file store and limits of GenericIntegrationFileTransfer; without them the endpoint answers 501. */
  uploads?: Uploads;
  /** Jobs whose publish failed, published again once the broker is back; without it they wait for the sweepers. */
  unpublished?: Pick<UnpublishedJobs, 'add'>;
  /** Recovery tests only: called between the store write and the publish. */
  afterPersist?: () => void;
}
