import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { IntegrationLabels } from './integration-labels';
import type { IntegrationLabelSettings } from './integration-labels';

/** What the sandbox of a process is doing, read at each scrape. */
export interface SandboxLoad {
  /** Worker threads (0 when connectors run on the main thread). */
  threads: number;
  /** Threads running at least one connector. */
  busyThreads: number;
  /** Runs started and not finished. */
  running: number;
  /** Runs waiting for room on a thread. */
  queued: number;
}

/**
 * Readings taken when Prometheus scrapes, not on the hot path: set once by the process that owns them.
 * `queueDepth` is for a bus that knows its queues at no cost (the in-process bus); an executor on
 * RabbitMQ sets `gi_queue_depth` from its sweeps instead.
 */
export interface MetricSources {
  queueDepth?: () => Iterable<readonly [pool: string, depth: number]>;
  sandbox?: () => SandboxLoad;
}

/** The Prometheus metrics of one process (docs/operations.md, "Metrics"). Services add their own to `registry`. */
export interface Metrics {
  registry: Registry;
  /**
   * What `/metrics` answers: this process's registry, or in a process of an embedded cluster the
   * metrics of every process, gathered by the primary.
   */
  exposition: () => Promise<string>;
  sources: MetricSources;
  /** Opt-in per-integration labels (docs/decisions.md): the bot and integration of a run, or `_other`. */
  integrationLabels: IntegrationLabels;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  authFailures: Counter<'caller' | 'reason'>;
  quotaRefusals: Counter<'scope' | 'quota'>;
  jobsInFlight: Gauge<'pool'>;
  jobDuration: Histogram<'pool' | 'status'>;
  queueWait: Histogram<'pool'>;
  outcomes: Counter<'pool' | 'status' | 'code'>;
  integrationOutcomes: Counter<'bot' | 'integration' | 'status'>;
  queueDepth: Gauge<'pool'>;
  deadLetters: Counter<'reason'>;
  storeDuration: Histogram<'operation' | 'outcome'>;
  gatewayPeers: Gauge;
  callbackDeliveries: Counter<'result'>;
  steps: Counter<'kind' | 'status'>;
  waitingInvocations: Gauge;
  stepsPerInvocation: Histogram;
}

/** Request latencies: a millisecond to the longest a sync call or a long poll may wait. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];
/** Run times and queue waits: up to the longest run an integration may have (24 h). */
export const RUN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 14_400, 43_200, 86_400];
/** Store operations: sub-millisecond (SQLite) to the 20 s a MongoDB call may wait for a primary. */
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

export interface MetricsOptions {
  integrationLabels?: IntegrationLabelSettings;
  /** The release, for `gi_build_info`. */
  version?: string;
}

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const sources: MetricSources = {};

  new Gauge({ name: 'gi_build_info', help: 'Always 1; the release as a label.', labelNames: ['version'], registers, aggregator: 'first' }).set({ version: options.version ?? 'dev' }, 1);

  // Pools seen once stay at 0 when empty, so a graph shows the fall to nothing rather than a gap.
  const seenPools = new Set<string>();
  const queueDepth = new Gauge({
    name: 'gi_queue_depth',
    help: "Jobs waiting in a pool's queue: at each scrape (embedded), or as an executor's last sweep saw them.",
    labelNames: ['pool'],
    registers,
    // prom-client calls `collect` at each scrape with the metric as `this`.
    collect() {
      if (!sources.queueDepth) return;
      for (const pool of seenPools) this.set({ pool }, 0);
      for (const [pool, depth] of sources.queueDepth()) {
        seenPools.add(pool);
        this.set({ pool }, depth);
      }
    },
  });
  new Gauge({
    name: 'gi_sandbox_threads',
    help: 'Sandbox worker threads by state: busy (running a connector) or idle.',
    labelNames: ['state'],
    registers,
    collect() {
      const load = sources.sandbox?.();
      if (!load) return;
      this.set({ state: 'busy' }, load.busyThreads);
      this.set({ state: 'idle' }, load.threads - load.busyThreads);
    },
  });
  new Gauge({
    name: 'gi_sandbox_runs',
    help: 'Connector runs in the sandbox by state: running, or queued for room on a thread.',
    labelNames: ['state'],
    registers,
    collect() {
      const load = sources.sandbox?.();
      if (!load) return;
      this.set({ state: 'running' }, load.running);
      this.set({ state: 'queued' }, load.queued);
    },
  });

  return {
    registry,
    exposition: () => registry.metrics(),
    sources,
    integrationLabels: new IntegrationLabels(options.integrationLabels ?? { enabled: false, limit: 0 }),
    httpDuration: new Histogram({
      name: 'gi_http_request_duration_seconds',
      help: 'HTTP replies by route template (unmatched for unknown paths), method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    }),
    authFailures: new Counter({
      name: 'gi_auth_failures_total',
      help: 'Calls refused 401 or 403, by caller (bot, admin) and reason (a token\'s, or an inbound scheme\'s: missing_signature, bad_signature, timestamp_outside_tolerance, unknown_key).',
      labelNames: ['caller', 'reason'],
      registers,
    }),
    quotaRefusals: new Counter({
      name: 'gi_quota_refusals_total',
      help: 'Calls answered 429, by scope (bot, token) and quota (ratePerSecond, maxInFlight).',
      labelNames: ['scope', 'quota'],
      registers,
    }),
    jobsInFlight: new Gauge({ name: 'gi_jobs_in_flight', help: 'Connector runs in progress, by pool.', labelNames: ['pool'], registers }),
    jobDuration: new Histogram({
      name: 'gi_job_duration_seconds',
      help: 'Connector run time by pool and outcome (Completed, Failed, Cancelled).',
      labelNames: ['pool', 'status'],
      buckets: RUN_BUCKETS,
      registers,
    }),
    queueWait: new Histogram({
      name: 'gi_job_queue_wait_seconds',
      help: 'Time from acceptance to the start of the first run, by pool.',
      labelNames: ['pool'],
      buckets: RUN_BUCKETS,
      registers,
    }),
    outcomes: new Counter({
      name: 'gi_invocation_outcomes_total',
      help: 'Recorded outcomes of connector runs by pool, status and error code (ok when Completed).',
      labelNames: ['pool', 'status', 'code'],
      registers,
    }),
    integrationOutcomes: new Counter({
      name: 'gi_integration_outcomes_total',
      help: 'Recorded outcomes by bot and integration (opt-in: METRICS_INTEGRATION_LABELS; _other past METRICS_INTEGRATION_LIMIT).',
      labelNames: ['bot', 'integration', 'status'],
      registers,
    }),
    queueDepth,
    deadLetters: new Counter({
      name: 'gi_dead_letters_total',
      help: 'Jobs this process dead-lettered: poison (handling failed on every delivery) or malformed (unreadable message).',
      labelNames: ['reason'],
      registers,
    }),
    storeDuration: new Histogram({
      name: 'gi_store_operation_duration_seconds',
      help: 'Store operations by operation (repository.method) and outcome (ok, error).',
      labelNames: ['operation', 'outcome'],
      buckets: STORE_BUCKETS,
      registers,
    }),
    // Every process of a cluster sees the same count: gathered, the highest is shown, not the sum.
    gatewayPeers: new Gauge({ name: 'gi_gateway_peers', help: 'Gateways sharing the quotas, this one included, as last seen.', registers, aggregator: 'max' }),
    callbackDeliveries: new Counter({
      name: 'gi_callback_attempts_total',
      help: 'Callback attempts by result: delivered, retry (to be tried again), given-up.',
      labelNames: ['result'],
      registers,
    }),
    steps: new Counter({
      name: 'gi_steps_total',
      help: 'Journal writes of durable runs, by kind (step, sleep, event) and the status written (done, failed, retrying, waiting).',
      labelNames: ['kind', 'status'],
      registers,
    }),
    // Every process reads the same count from the store: gathered, the highest (the latest) is shown, not the sum.
    waitingInvocations: new Gauge({
      name: 'gi_invocations_waiting',
      help: 'Invocations suspended in a sleep or an event wait (holding no executor), as the last sweep counted them.',
      registers,
      aggregator: 'max',
    }),
    stepsPerInvocation: new Histogram({
      name: 'gi_steps_per_invocation',
      help: 'Journal entries of durable invocations as they finish (invocations that made no step are not counted).',
      buckets: [1, 10, 100, 1000, 10_000, 100_000, 1_000_000],
      registers,
    }),
  };
}
