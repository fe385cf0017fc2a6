/** What a process tells its operators: JSON logs with credentials redacted, and Prometheus metrics. */
export * from './logger';
export * from './metrics';
