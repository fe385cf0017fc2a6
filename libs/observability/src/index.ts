/** What a process tells its operators: JSON logs with credentials redacted, and Prometheus metrics. */
export * from './logger';
export * from './log-throttle';
export * from './integration-labels';
export * from './metrics';
export * from './redact';
export * from './timed-methods';
