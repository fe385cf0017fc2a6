/** The service commands of `gi`: `up` is the embedded deployment, the others the distributed services. */
export const SERVICE_NAMES = ['up', 'gateway', 'results', 'control', 'executor'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

export const SERVICE_SUMMARIES: Record<ServiceName, string> = {
  up: 'Start the service in embedded mode: gi up [--processes N] (default: the cores; SQLite, in-process bus)',
  gateway: 'Start the gateway service (webhook endpoints; also answers polls) over RabbitMQ (AMQP_URL)',
  results: 'Start the results service (long polls of GetGenericIntegrationResponse)',
  control: 'Start the control service (admin API; ADMIN_TOKEN and AMQP_URL required)',
  executor: 'Start an executor: gi executor [--pools default,bulk] (else EXECUTOR_POOLS)',
};
