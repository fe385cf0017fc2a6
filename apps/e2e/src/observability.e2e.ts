import { Api, send } from './api-client';
import { openApiDrift } from './openapi-replies';
import { example, throws } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** What an operator reads from the embedded service: its log lines on stdout and its /metrics. */

type Line = Record<string, unknown> & { msg?: string; level?: number };
const lines = (service: ServiceProcess): Line[] =>
  service.output.flatMap((text) => {
    try {
      return [JSON.parse(text) as Line];
    } catch {
      return [];
    }
  });

const TOKEN_SECRET = 'observability-e2e-token-secret-0123456789abcdef';

describe('logs and metrics of the embedded service', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;

  beforeAll(async () => {
    service = await startService({ env: { TOKEN_SECRET, AMQP_URL: 'amqp://gi:broker-password@127.0.0.1:5672/' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    expect((await api.admin('PUT', '/bots/acme/integrations/throws', { entityName: 'Order', code: throws })).status).toBe(200);
  });
  afterAll(() => service.dispose());

  it('logs the start with the release and the settings, credentials redacted', () => {
    const starting = lines(service).find((line) => line.msg === 'starting');
    expect(starting).toMatchObject({ version: expect.any(String), settings: { TOKEN_SECRET: '[redacted]', ADMIN_TOKEN: '[redacted]', AMQP_URL: 'amqp://gi:[redacted]@127.0.0.1:5672/', ACCESS_LOG: 'info' } });
    expect(lines(service).find((line) => line.msg === 'listening')).toMatchObject({ version: expect.any(String) });
    const everything = service.output.join('\n');
    for (const secret of [TOKEN_SECRET, 'broker-password', 'e2e-admin-token']) expect(everything).not.toContain(secret);
  });

  it('writes one access line per request with its request id, bot and invocation; refusals and failures their own line', async () => {
    const url = (integration: string) => api.webhookUrl('acme', 'Order', integration);
    const ok = await api.postJson(url('ack'), token, { orderId: 1 }, { 'X-Request-Id': 'e2e-req-1' });
    expect([ok.status, ok.headers.get('x-request-id')]).toEqual([200, 'e2e-req-1']);
    const invocationId = ok.headers.get('x-invocation-id');
    const refused = await api.postJson(url('ack'), 'not-a-token', {});
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await api.postJson(url('throws'), token, {}, { 'X-Request-Id': 'e2e-req-3' })).status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 200));

    const access = lines(service).filter((line) => line.msg === 'request');
    expect(access.find((line) => line.requestId === 'e2e-req-1')).toMatchObject({
      level: 30,
      method: 'POST',
      route: '/api/Platform/:botId/:entityName/:integrationId/GenericIntegration',
      status: 200,
      botId: 'acme',
      integrationId: 'ack',
      invocationId,
      ms: expect.any(Number),
    });
    expect(lines(service).find((line) => line.msg === 'authentication refused')).toMatchObject({ level: 40, reason: 'invalid', code: 'unauthorized', botId: 'acme' });
    expect(lines(service).find((line) => line.msg === 'request failed' && line.requestId === 'e2e-req-3')).toMatchObject({ status: 500, code: 'connector_failed', integrationId: 'throws' });
    expect(lines(service).find((line) => line.msg === 'invocation finished' && line.integrationId === 'throws')).toMatchObject({ status: 'Failed', code: 'connector_failed', botId: 'acme' });
  });

  it('exposes the queue depth, the sandbox, the store and the runs in embedded mode', async () => {
    const metrics = await send(`${service.baseUrl}/metrics`);
    for (const series of [
      /^gi_queue_depth\{pool="default"\} \d+$/m,
      /^gi_sandbox_threads\{state="busy"\} \d+$/m,
      /^gi_sandbox_runs\{state="queued"\} \d+$/m,
      /^gi_store_operation_duration_seconds_count\{operation="invocations\.claim",outcome="ok"\} [1-9]\d*$/m,
      /^gi_job_queue_wait_seconds_count\{pool="default"\} [1-9]\d*$/m,
      /^gi_job_duration_seconds_bucket\{le="86400",pool="default",status="Completed"\} [1-9]\d*$/m,
      /^gi_invocation_outcomes_total\{pool="default",status="Failed",code="connector_failed"\} 1$/m,
      /^gi_auth_failures_total\{caller="bot",reason="invalid"\} 1$/m,
      /^gi_build_info\{version="[^"]+"\} 1$/m,
    ]) {
      expect([series.source, series.test(metrics.text)]).toEqual([series.source, true]);
    }
  });

  it('the reply check names the operation, the status and the schema error of a drift', async () => {
    const json = new Headers({ 'content-type': 'application/json' });
    const problem = new Headers({ 'content-type': 'application/problem+json' });
    expect(await openApiDrift('GET', `${service.baseUrl}/healthz`, { status: 200, headers: json, json: { status: 'ok' } })).toBeNull();
    expect(await openApiDrift('GET', `${service.baseUrl}/healthz`, { status: 418, headers: json, json: {} })).toMatch(/^\S+ \(GET \/healthz\) answered 418: status not listed/);
    const compileError = { type: 'urn:gi:problem:bad-request', title: 'Bad request', status: 400, detail: 'x', line: 1, column: 2, message: 'SyntaxError' };
    expect(await openApiDrift('PUT', `${service.baseUrl}/admin/bots/a/integrations/b`, { status: 400, headers: problem, json: compileError })).toBeNull();
    expect(await openApiDrift('PUT', `${service.baseUrl}/admin/bots/a/integrations/b`, { status: 400, headers: problem, json: { ...compileError, type: 'nope' } })).toMatch(
      /^deployIntegration \(PUT \/admin\/bots\/a\/integrations\/b\) answered 400: body does not match the application\/problem\+json schema: \/type must be equal to one of the allowed values/,
    );
    const webhook = `${service.baseUrl}/api/Platform/a/Order/b/GenericIntegration`;
    expect(await openApiDrift('GET', webhook, { status: 405, headers: new Headers({ ...Object.fromEntries(problem), allow: 'POST' }), json: { ...compileError, type: 'urn:gi:problem:method-not-allowed', status: 405 } })).toBeNull();
    expect(await openApiDrift('GET', webhook, { status: 405, headers: new Headers({ ...Object.fromEntries(problem), allow: 'GET' }), json: compileError })).toMatch(/^genericIntegration .* header Allow "GET"/);
  });

  it('logs the stop with the release', async () => {
    expect(await service.stop()).toBe(0);
    expect(lines(service).slice(-1)[0]).toMatchObject({ msg: 'stopped', version: expect.any(String), signal: 'SIGTERM' });
  });
});
