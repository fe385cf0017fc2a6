import type { SecretVault } from '@gi/auth';
import type { JobBus } from '@gi/contracts';
import type { ClaimedInvocation, Clock, ConnectorRuntime, FileStore, Store } from '@gi/domain';
import type { Logger, Metrics } from '@gi/observability';
import type { DurableSettings } from './durable-run';
import type { IntegrationVersions } from './integration-versions';

/** What an executor's runs are given: its ports, its identity as a lease owner, and its settings. */
export interface ExecutorDeps {
  store: Store;
  bus: JobBus;
  runtime: ConnectorRuntime;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  /** Identifies this executor as a lease owner. */
  ownerId: string;
  /** Lease length; renewed every third of it while the run goes on. */
  leaseMs: number;
  /**
   * Runs started for one invocation without progress before it is given up as Failed (each interrupted
   * by a crash); a durable run that journals a step or suspends makes progress, and counts again from there.
   */
  maxAttempts: number;
  /** How durable runs (steps, sleeps, event waits) behave. */
  durable: DurableSettings;
  /** Where uploaded files are kept, for `Context.ReadFile`; without it connectors cannot read files. */
  files?: FileStore;
  /** Told when an invocation with a callback finished, so it is delivered at once. */
  callbacks?: { kick(): void };
  /** Connector secrets (`Context.Secrets`), opened for each run; without it connectors see none. */
  secrets?: Pick<SecretVault, 'forRun'>;
  /** The deployed versions this executor has run (read from `store.catalog` once each). */
  versions: IntegrationVersions;
  /** Fault injection for recovery tests only: called as each run starts. */
  beforeRun?: (invocation: ClaimedInvocation) => void;
}
