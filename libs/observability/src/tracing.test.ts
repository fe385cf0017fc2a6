import { SpanKind, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { JobBus, JobHandler, JobMessage } from '@gi/contracts';
import type { Store } from '@gi/domain';
import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { contextFrom, giTracer, inSpan, traceContextOf } from './trace-spans';
import { tracedJobBus } from './traced-job-bus';
import { tracedStore } from './traced-store';
import { tracingWanted } from './tracing';

describe('tracingWanted', () => {
  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' }, false],
    [{ OTEL_TRACES_EXPORTER: 'console' }, true],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, false],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, false],
    [{ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, true],
  ])('%j: %s', (env, wanted) => {
    expect(tracingWanted(env as NodeJS.ProcessEnv)).toBe(wanted);
  });
});

describe('trace context helpers while tracing is off', () => {
  it('carry nothing', () => {
    expect(traceContextOf(contextFrom({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }))).toBeUndefined();
  });
});

describe('with the SDK started', () => {
  const exporter = new InMemorySpanExporter();
  const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], metricReaders: [], logRecordProcessors: [], autoDetectResources: false });
  const caller = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=1' };

  beforeAll(() => sdk.start());
  afterAll(() => sdk.shutdown());
  beforeEach(() => exporter.reset());

  const finished = () => exporter.getFinishedSpans();
  const named = (name: string) => finished().find((span) => span.name === name)!;

  it('puts the trace and span ids on the log lines written within a span, and none outside', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const logger = createLogger('info', 'test', { destination });
    await inSpan('logged', {}, async () => logger.info('inside'), contextFrom(caller));
    logger.info('outside');
    const span = named('logged').spanContext();
    expect(lines.map(({ msg, trace_id, span_id, trace_flags }) => ({ msg, trace_id, span_id, trace_flags }))).toEqual([
      { msg: 'inside', trace_id: span.traceId, span_id: span.spanId, trace_flags: '01' },
      { msg: 'outside', trace_id: undefined, span_id: undefined, trace_flags: undefined },
    ]);
  });

  it('continues a carried trace context and carries on its own', async () => {
    const carried = await inSpan('child', {}, async () => traceContextOf(), contextFrom(caller));
    const child = named('child');
    expect(child.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(carried).toEqual({ traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${child.spanContext().spanId}-01`, tracestate: 'vendor=1' });
  });

  it('starts a trace of its own without a carried context, and keeps a caller\'s decision not to sample', async () => {
    expect(await inSpan('root', {}, async () => traceContextOf(), contextFrom(undefined))).toEqual({ traceparent: expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/) });
    const unsampled = await inSpan('unsampled', {}, async () => traceContextOf(), contextFrom({ traceparent: caller.traceparent.replace(/01$/, '00') }));
    expect(unsampled?.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/);
    expect(finished().map((span) => span.name)).toEqual(['root']);
  });

  it('marks a span whose work failed, and passes the error on', async () => {
    await expect(inSpan('failing', {}, async () => Promise.reject(new TypeError('no')))).rejects.toThrow('no');
    expect(named('failing').status).toEqual({ code: 2, message: 'no' });
    expect(named('failing').attributes['error.type']).toBe('TypeError');
  });

  it('sends the trace context with each job and continues it where the job is handled', async () => {
    const sent: JobMessage[] = [];
    let handler: JobHandler = async () => 'ack';
    const bus = {
      publish: async (job: JobMessage) => void sent.push(job),
      consume: async (_pool: string, _concurrency: number, h: JobHandler) => ((handler = h), { close: async () => undefined }),
      isBlocked: () => false,
    } as unknown as JobBus;
    const traced = tracedJobBus(bus, 'rabbitmq');
    const job: JobMessage = { kind: 'job', version: 1, botId: 'bot-a', invocationId: 'inv-1', pool: 'default' };
    await inSpan('call', {}, () => traced.publish(job), contextFrom(caller));
    expect(sent).toEqual([{ ...job, trace: { traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${named('publish default').spanContext().spanId}-01`, tracestate: 'vendor=1' } }]);
    expect(traced.isBlocked()).toBe(false);

    let inHandler: string | undefined;
    await traced.consume('default', 1, async () => ((inHandler = traceContextOf()?.traceparent), 'ack'));
    // Handled outside any span: the job's own context is the parent.
    expect(await handler(sent[0], { deliveryCount: 2 })).toBe('ack');
    const publish = named('publish default');
    const consume = named('process default');
    expect([publish.kind, publish.parentSpanContext?.spanId]).toEqual([SpanKind.PRODUCER, named('call').spanContext().spanId]);
    expect([consume.kind, consume.parentSpanContext?.spanId, consume.spanContext().traceId]).toEqual([SpanKind.CONSUMER, publish.spanContext().spanId, '4bf92f3577b34da6a3ce929d0e0e4736']);
    expect(consume.attributes).toMatchObject({ 'messaging.system': 'rabbitmq', 'gi.invocation.id': 'inv-1', 'gi.job.delivery_count': 2, 'gi.job.decision': 'ack' });
    expect(inHandler).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${consume.spanContext().spanId}-01`);
  });

  it('traces store operations made within a traced operation only', async () => {
    const invocations = { count: 0, getState: async () => ({ status: 'Queued' }), size: () => 3 };
    const store = tracedStore({ invocations, catalog: {}, tokens: {}, instances: {}, ping: async () => true, close: async () => undefined } as unknown as Store, 'sqlite');
    await store.invocations.getState({ botId: 'b', id: 'i' });
    expect(finished()).toEqual([]);
    await inSpan('call', {}, async () => {
      expect(await store.invocations.getState({ botId: 'b', id: 'i' })).toEqual({ status: 'Queued' });
      expect((store.invocations as unknown as typeof invocations).size()).toBe(3);
    });
    expect(finished().map((span) => [span.name, span.parentSpanContext?.spanId === named('call').spanContext().spanId])).toEqual([
      ['store invocations.getState', true],
      ['store invocations.size', true],
      ['call', false],
    ]);
    expect(named('store invocations.getState').attributes).toMatchObject({ 'db.system.name': 'sqlite', 'db.operation.name': 'getState' });
    expect(await store.ping()).toBe(true);
  });

  it('has a tracer that makes real spans', () => {
    expect(giTracer().startSpan('x').isRecording()).toBe(true);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});

describe('log lines while tracing is off', () => {
  it('keep their own fields, and carry no trace ids', () => {
    const lines: Array<Record<string, unknown>> = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const logger = createLogger('info', 'test', { destination });
    logger.info({ version: '1.2.3' }, 'starting');
    logger.info({ port: 8080 }, 'listening');
    expect(lines).toMatchObject([
      { msg: 'starting', version: '1.2.3' },
      { msg: 'listening', port: 8080 },
    ]);
    expect(lines.every((line) => !('trace_id' in line) && !('version' in line && line.msg === 'listening'))).toBe(true);
  });
});
