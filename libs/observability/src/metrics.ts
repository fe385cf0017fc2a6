import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The Prometheus metrics of one process. Services add their own to `registry`. */
export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  jobsInFlight: Gauge<'pool'>;
  jobDuration: Histogram<'pool' | 'status'>;
  outcomes: Counter<'status' | 'code'>;
  queueDepth: Gauge<'pool'>;
  quotaRefusals: Counter<'scope' | 'quota'>;
  gatewayPeers: Gauge;
  callbackDeliveries: Counter<'result'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
  return {
    registry,
    httpDuration: new Histogram({
      name: 'gi_http_request_duration_seconds',
      help: 'HTTP request latency by route, method and status.',
      labelNames: ['route', 'method', 'status'],
      buckets,
      registers: [registry],
    }),
    jobsInFlight: new Gauge({ name: 'gi_jobs_in_flight', help: 'Connector runs in progress.', labelNames: ['pool'], registers: [registry] }),
    jobDuration: new Histogram({
      name: 'gi_job_duration_seconds',
      help: 'Connector run duration by pool and outcome.',
      labelNames: ['pool', 'status'],
      buckets,
      registers: [registry],
    }),
    queueDepth: new Gauge({ name: 'gi_queue_depth', help: 'Jobs waiting in a pool\'s queue, as last seen by this executor.', labelNames: ['pool'], registers: [registry] }),
    outcomes: new Counter({ name: 'gi_invocation_outcomes_total', help: 'Recorded outcomes by status and error code.', labelNames: ['status', 'code'], registers: [registry] }),
    quotaRefusals: new Counter({
      name: 'gi_quota_refusals_total',
      help: 'Calls answered 429, by scope (bot, token) and quota (ratePerSecond, maxInFlight).',
      labelNames: ['scope', 'quota'],
      registers: [registry],
    }),
    gatewayPeers: new Gauge({ name: 'gi_gateway_peers', help: 'Gateways sharing the quotas, this one included, as last seen.', registers: [registry] }),
    callbackDeliveries: new Counter({
      name: 'gi_callback_attempts_total',
      help: 'Callback attempts by result: delivered, retry (to be tried again), given-up.',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}
