/** What a process tells its operators: JSON logs with credentials redacted, Prometheus metrics, and OpenTelemetry traces. */
export * from './logger';
export * from './log-throttle';
export * from './integration-labels';
export * from './cluster-metrics';
export * from './metrics';
export * from './tracing';
export * from './trace-spans';
export * from './traced-job-bus';
export * from './traced-store';
export * from './redact';
export * from './timed-methods';
