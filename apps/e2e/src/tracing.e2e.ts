import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { deleteBusTopology } from '@gi/testing';
import { Api } from './api-client';
import { CallbackReceiver } from './callback-receiver';
import { example } from './connectors';
import { distributedDeployment } from './distributed-env';
import { OtlpReceiver, spanTree } from './otlp-receiver';
import type { ReceivedSpan } from './otlp-receiver';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

const SERVER = 2;
const PRODUCER = 4;
const CONSUMER = 5;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** A caller's trace: its trace id, the id of its own (client) span, and the traceparent it sends. */
const callerTrace = (flags = '01') => {
  const traceId = hex(16);
  const parentId = hex(8);
  return { traceId, parentId, traceparent: `00-${traceId}-${parentId}-${flags}` };
};

/** Calls the downstream API (a local receiver) trying to set a traceparent of its own, then answers. */
const callsDownstream = (url: string) => `
const reply = await Context.Http.Request({ method: 'POST', url: ${JSON.stringify(url)}, body: { hi: 1 }, headers: { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' } });
Context.SetResponseEntity({ ResponseBody: { downstream: reply.status } });
`;

const one = (spans: ReceivedSpan[], match: (span: ReceivedSpan) => boolean, what: string): ReceivedSpan => {
  const found = spans.filter(match);
  if (found.length !== 1) throw new Error(`expected one ${what}, found ${found.length} in:\n${spanTree(spans)}`);
  return found[0];
};

/** The span id in a reply's traceparent, checked to continue `traceId` with `flags`. */
const replySpanId = (traceparent: string | null, traceId: string, flags = '01'): string => {
  const match = new RegExp(`^00-${traceId}-([0-9a-f]{16})-${flags}$`).exec(traceparent ?? '');
  if (!match) throw new Error(`the reply's traceparent ${traceparent} does not continue trace ${traceId}`);
  return match[1];
};

describe('tracing (OpenTelemetry, exported over OTLP/HTTP to a local receiver)', () => {
  let receiver: OtlpReceiver;
  let downstream: CallbackReceiver;

  beforeAll(async () => {
    [receiver, downstream] = await Promise.all([OtlpReceiver.start(), CallbackReceiver.start()]);
  });

  afterAll(async () => {
    await Promise.all([receiver.close(), downstream.close()]);
  });

  describe('distributed: gateway, results and executor over RabbitMQ', () => {
    const { dataDir, prefix, start } = distributedDeployment('otel');
    let services: ServiceProcess[] = [];
    let gateway: ServiceProcess;
    let results: ServiceProcess;
    let token: string;

    beforeAll(async () => {
      const env = { ...receiver.env, CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1' };
      const control = await start('control', [], env);
      services = [control];
      const [g, r, executor] = await Promise.all([start('gateway', [], env), start('results', [], env), start('executor', ['--pools', 'default'], env)]);
      [gateway, results] = [g, r];
      services.push(gateway, results, executor);
      const admin = new Api(control.baseUrl);
      token = await admin.setUp('acme', 'Order', 'traced', callsDownstream(downstream.url('/downstream')), { allowedHosts: ['127.0.0.1'] });
      expect((await admin.admin('POST', '/bots/acme/callback-secret')).status).toBe(201);
      expect((await admin.admin('PUT', '/bots/acme/integrations/ack', { entityName: 'Order', code: example('ack') })).status).toBe(200);
    });

    afterAll(async () => {
      await Promise.all(services.map((s) => s.stop()));
      await deleteBusTopology(prefix, ['default'], 6);
      rmSync(dataDir, { recursive: true, force: true });
    });

    it("continues the caller's trace through the gateway, the bus and the executor's run, out to the connector's downstream call", async () => {
      const caller = callerTrace();
      const api = new Api(gateway.baseUrl);
      const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'traced'), token, { orderId: 1 }, { traceparent: caller.traceparent, tracestate: 'caller=1' });
      expect([reply.status, reply.json]).toEqual([200, { downstream: 204 }]);
      const serverSpanId = replySpanId(reply.headers.get('traceparent'), caller.traceId);

      const spans = await receiver.awaitTrace(caller.traceId, [
        (s) => s.kind === SERVER,
        (s) => s.kind === PRODUCER,
        (s) => s.kind === CONSUMER,
        (s) => s.name === 'connector run',
        (s) => s.name === 'store invocations.complete',
      ]);
      console.log(`span tree of a sync call (distributed):\n${spanTree(spans)}`);

      const server = one(spans, (s) => s.kind === SERVER, 'server span');
      expect(server).toMatchObject({ service: 'gi-gateway', spanId: serverSpanId, parentSpanId: caller.parentId, name: 'POST /api/Platform/:botId/:entityName/:integrationId/GenericIntegration' });
      expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': server.name.slice(5), 'http.response.status_code': 200 });
      const publish = one(spans, (s) => s.kind === PRODUCER, 'publish span');
      expect(publish).toMatchObject({ service: 'gi-gateway', name: 'publish default', parentSpanId: server.spanId });
      expect(publish.attributes).toMatchObject({ 'messaging.system': 'rabbitmq', 'messaging.destination.name': 'default' });
      const consume = one(spans, (s) => s.kind === CONSUMER, 'consumer span');
      expect(consume).toMatchObject({ service: 'gi-executor', name: 'process default', parentSpanId: publish.spanId });
      const run = one(spans, (s) => s.name === 'connector run', 'run span');
      expect(run).toMatchObject({ service: 'gi-executor', parentSpanId: consume.spanId });
      expect(run.attributes).toMatchObject({ 'gi.integration.id': 'traced', 'gi.integration.version': 1, 'gi.pool': 'default', 'gi.attempt': 1, 'gi.outcome': 'Completed' });
      expect(one(spans, (s) => /^store invocations\.create/.test(s.name), 'create span')).toMatchObject({ service: 'gi-gateway', parentSpanId: server.spanId });
      expect(one(spans, (s) => s.name === 'store invocations.claim', 'claim span')).toMatchObject({ service: 'gi-executor', parentSpanId: consume.spanId });
      expect(one(spans, (s) => s.name === 'store invocations.complete', 'complete span')).toMatchObject({ service: 'gi-executor', parentSpanId: run.spanId });
      expect(spans.filter((s) => s.name.includes('acme') || s.name.includes('traced'))).toEqual([]);

      // The connector's request carries the run's context, not the traceparent it tried to set.
      const [call] = await downstream.received('/downstream');
      expect(call.headers.traceparent).toBe(`00-${caller.traceId}-${run.spanId}-01`);
      expect(call.headers.tracestate).toBe('caller=1');
    });

    it('answers polls through results with their own server span, and sends callbacks with a traceparent', async () => {
      const api = new Api(gateway.baseUrl);
      const started = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, { orderId: 2 }, { 'Callback-Url': downstream.url('/hooks/traced') });
      expect(started.status).toBe(202);
      const caller = callerTrace();
      const polled = await fetch(`${results.baseUrl}/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${started.json.invocationId}&waitSeconds=20`, {
        headers: { authorization: `Bearer ${token}`, traceparent: caller.traceparent },
      });
      expect(polled.status).toBe(200);
      const pollSpanId = replySpanId(polled.headers.get('traceparent'), caller.traceId);
      const poll = one(await receiver.awaitTrace(caller.traceId, [(s) => s.kind === SERVER]), (s) => s.kind === SERVER, 'server span');
      expect(poll).toMatchObject({ service: 'gi-results', spanId: pollSpanId, parentSpanId: caller.parentId, name: 'GET /api/Platform/:botId/GetGenericIntegrationResponse' });

      const [callback] = await downstream.received('/hooks/traced');
      const callbackTrace = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(callback.headers.traceparent));
      expect(callbackTrace).not.toBeNull();
      const delivery = one(await receiver.awaitTrace(callbackTrace![1], [(s) => s.name === 'POST callback']), (s) => s.name === 'POST callback', 'callback span');
      expect(delivery).toMatchObject({ service: 'gi-executor', spanId: callbackTrace![2], kind: 3 });
      expect(delivery.attributes).toMatchObject({ 'http.response.status_code': 204, 'server.address': '127.0.0.1' });
    });
  });

  describe('embedded', () => {
    let service: ServiceProcess;
    let untraced: ServiceProcess;
    let token: string;
    let tokenUntraced: string;

    beforeAll(async () => {
      [service, untraced] = await Promise.all([startService({ env: receiver.env }), startService()]);
      token = await new Api(service.baseUrl).setUp('acme', 'Order', 'ack', example('ack'));
      tokenUntraced = await new Api(untraced.baseUrl).setUp('acme', 'Order', 'ack', example('ack'));
    });

    afterAll(async () => {
      await Promise.all([service.dispose(), untraced.dispose()]);
    });

    it('makes one trace of a call through the in-process bus', async () => {
      const caller = callerTrace();
      const api = new Api(service.baseUrl);
      const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 3 }, { traceparent: caller.traceparent });
      expect(reply.status).toBe(200);
      const serverSpanId = replySpanId(reply.headers.get('traceparent'), caller.traceId);
      const spans = await receiver.awaitTrace(caller.traceId, [(s) => s.kind === SERVER, (s) => s.name === 'connector run']);
      console.log(`span tree of a sync call (embedded):\n${spanTree(spans)}`);
      const server = one(spans, (s) => s.kind === SERVER, 'server span');
      expect(server).toMatchObject({ service: 'generic-integration', spanId: serverSpanId, parentSpanId: caller.parentId });
      const publish = one(spans, (s) => s.kind === PRODUCER, 'publish span');
      expect(publish).toMatchObject({ parentSpanId: server.spanId, attributes: expect.objectContaining({ 'messaging.system': 'in-process' }) });
      const consume = one(spans, (s) => s.kind === CONSUMER, 'consumer span');
      expect(consume.parentSpanId).toBe(publish.spanId);
      expect(one(spans, (s) => s.name === 'connector run', 'run span').parentSpanId).toBe(consume.spanId);
    });

    it('shows each journalled step of a durable run as a child span of the run', async () => {
      const api = new Api(service.baseUrl);
      const steps = `const e = Context.GetRequestEntity();
        const a = await Context.Step('fetch order', () => 1);
        await Context.Step('fetch order', () => 2);
        try { await Context.Step('charge', () => { throw new Context.NonRetryableError('declined'); }); } catch {}
        e.ResponseBody = { a }; Context.SetResponseEntity(e);`;
      expect((await api.admin('PUT', '/bots/acme/integrations/steps', { entityName: 'Order', code: steps })).status).toBe(200);
      const caller = callerTrace();
      expect((await api.postJson(api.webhookUrl('acme', 'Order', 'steps'), token, {}, { traceparent: caller.traceparent })).status).toBe(200);
      const spans = await receiver.awaitTrace(caller.traceId, [(s) => s.name === 'connector run', (s) => s.name === 'step charge']);
      const run = one(spans, (s) => s.name === 'connector run', 'run span');
      const stepSpans = spans.filter((s) => s.name.startsWith('step '));
      // In any order: spans are exported as they end.
      const seen = stepSpans.map((s) => [s.name, s.attributes['gi.step.occurrence'], s.attributes['gi.step.status']]);
      expect(seen.sort((x, y) => String(x).localeCompare(String(y)))).toEqual([
        ['step charge', 1, 'failed'],
        ['step fetch order', 1, 'done'],
        ['step fetch order', 2, 'done'],
      ]);
      for (const step of stepSpans) expect(step.parentSpanId).toBe(run.spanId);
    });

    it('starts a trace for a call without traceparent, and records nothing of a call its caller sampled out', async () => {
      const api = new Api(service.baseUrl);
      const fresh = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 4 });
      const [, traceId, spanId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(fresh.headers.get('traceparent') ?? '') ?? [];
      expect(traceId).toBeDefined();
      const root = one(await receiver.awaitTrace(traceId, [(s) => s.kind === SERVER]), (s) => s.kind === SERVER, 'server span');
      expect([root.spanId, root.parentSpanId]).toEqual([spanId, '']);

      // ParentBased sampling: the caller's decision (flags 00) holds; the trace id still goes on.
      const caller = callerTrace('00');
      const sampledOut = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 5 }, { traceparent: caller.traceparent });
      expect(sampledOut.status).toBe(200);
      replySpanId(sampledOut.headers.get('traceparent'), caller.traceId, '00');
      const marker = callerTrace();
      await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 6 }, { traceparent: marker.traceparent });
      await receiver.awaitTrace(marker.traceId, [(s) => s.name === 'connector run']);
      expect(receiver.trace(caller.traceId)).toEqual([]);
    });

    it('exports the spans not sent yet when the process is stopped (SIGTERM)', async () => {
      const slow = await startService({ env: { ...receiver.env, OTEL_BSP_SCHEDULE_DELAY: '60000' } });
      try {
        const api = new Api(slow.baseUrl);
        const slowToken = await api.setUp('acme', 'Order', 'ack', example('ack'));
        const caller = callerTrace();
        expect((await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), slowToken, { orderId: 8 }, { traceparent: caller.traceparent })).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(receiver.trace(caller.traceId)).toEqual([]);
        expect(await slow.stop()).toBe(0);
        expect(receiver.trace(caller.traceId).map((span) => span.name)).toEqual(expect.arrayContaining(['connector run', 'publish default']));
      } finally {
        await slow.dispose();
      }
    });

    it('adds no traceparent to replies while tracing is off', async () => {
      const api = new Api(untraced.baseUrl);
      const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), tokenUntraced, { orderId: 7 }, { traceparent: callerTrace().traceparent });
      expect([reply.status, reply.headers.get('traceparent')]).toEqual([200, null]);
    });
  });
});
