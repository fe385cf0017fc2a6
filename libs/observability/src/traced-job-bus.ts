import { SpanKind } from '@opentelemetry/api';
import type { JobBus, JobHandler, JobMessage } from '@gi/contracts';
import { contextFrom, inSpan, traceContextOf } from './trace-spans';

/** `messaging.system` of the bus: RabbitMQ, or the in-process queue of the embedded deployment. */
export type BusSystem = 'rabbitmq' | 'in-process';

const jobAttributes = (system: BusSystem, job: JobMessage, operation: 'publish' | 'process') => ({
  'messaging.system': system,
  'messaging.operation.name': operation,
  'messaging.destination.name': job.pool,
  'messaging.message.id': job.invocationId,
  'gi.bot.id': job.botId,
  'gi.invocation.id': job.invocationId,
  'gi.pool': job.pool,
});

/**
 * The bus with a span per job published (producer) and per job handled (consumer). The job carries the
 * producer span's W3C trace context (`trace`), so the consumer's span, and everything the executor does
 * with the job, continues the caller's trace in whatever process takes it. Everything else passes through.
 */
export function tracedJobBus<Bus extends JobBus>(bus: Bus, system: BusSystem): Bus {
  const publish: JobBus['publish'] = (job, options) =>
    inSpan(`publish ${job.pool}`, { kind: SpanKind.PRODUCER, attributes: jobAttributes(system, job, 'publish') }, () => bus.publish({ ...job, trace: traceContextOf() }, options));

  const traced = (handler: JobHandler): JobHandler => (job, delivery) =>
    inSpan(
      `process ${job.pool}`,
      { kind: SpanKind.CONSUMER, attributes: { ...jobAttributes(system, job, 'process'), ...(delivery ? { 'gi.job.delivery_count': delivery.deliveryCount } : {}) } },
      async (span) => {
        const decision = await handler(job, delivery);
        span.setAttribute('gi.job.decision', decision);
        return decision;
      },
      contextFrom(job.trace),
    );
  const consume: JobBus['consume'] = (pool, concurrency, handler, options) => bus.consume(pool, concurrency, traced(handler), options);

  return new Proxy(bus, {
    get(target, property, receiver) {
      if (property === 'publish') return publish;
      if (property === 'consume') return consume;
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
