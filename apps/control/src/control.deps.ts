import type { SecretVault, TokenService } from '@gi/auth';
import type { Clock, ConnectorRuntime, FileStore, QuotaDefaults, Store, Versioned } from '@gi/domain';
import type { FileReadLog } from '@gi/use-cases';
import type { JobBus } from '@gi/contracts';
import type { BodyTimeouts } from '@gi/http';

export interface ControlSettings {
  adminToken: string;
  platformSegment: string;
  /** Base URL shown on the webhook screen; the request's own origin when unset. */
  publicBaseUrl?: string;
  maxBodyBytes: number;
  /** How long a client may take to send a body. */
  bodyTimeouts: BodyTimeouts;
  /** The deepest nesting of arrays and objects a JSON body may have. */
  maxJsonDepth: number;
  /** What a bot without quotas of its own gets (shown as its effective quotas). */
  quotaDefaults: QuotaDefaults;
}

export interface ControlDeps {
  store: Store;
  tokens: TokenService;
  /** Connector secrets: sealed on the way in, never shown again. */
  secrets: SecretVault;
  /** Checks that connector code compiles before it is deployed, and runs drafts against stored requests (replays). */
  runtime: Pick<ConnectorRuntime, 'compile' | 'run'>;
  /** Uploaded files, read by the connectors of replayed file transfers; without it they read none. */
  files?: FileStore;
  /** Compares two versions (the diff route), answering the VersionDiff as JSON text: on a thread of its own in the services; on this one when absent. */
  diffVersions?: (from: Versioned, to: Versioned) => Promise<string>;
  /** Where a failed file read of a replay is logged. */
  log: FileReadLog;
  /** Where cancellations are announced (executors stop the run, waiting callers wake). */
  bus: Pick<JobBus, 'publishCancel' | 'publishCompletion'>;
  clock: Clock;
  settings: ControlSettings;
}
