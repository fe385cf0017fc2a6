import { Writable } from 'node:stream';
import { botAccess } from './access';
import { unauthorized } from '@gi/auth';
import { GiError } from '@gi/domain';
import { createLogger, createMetrics } from '@gi/observability';
import { publicAccess } from './access';
import { createHttpApp } from './http-app';
import { createHttpServer } from './http-server';
import { callInProcess, sendRawInProcess } from './in-process-client';
import type { AccessLogLevel } from './request-observer';
import { Routes } from './routes';

type Line = Record<string, unknown>;

/** A logger whose lines land in `lines`, parsed. */
function capturedLogger(level = 'debug') {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { lines, logger: createLogger(level, 'test', { destination }) };
}

/** A bot's token is "good-<botId>"; "expired" is an expired one. */
const tokens = {
  verify: async (authorization: string | undefined, botId: string) => {
    if (!authorization) throw unauthorized('A bearer token is required.', 'missing');
    if (authorization === 'Bearer expired') throw unauthorized('The token has expired.', 'expired');
    if (authorization !== `Bearer good-${botId}`) throw unauthorized('The token is not valid.', 'invalid');
    return { tokenId: 't1' };
  },
};

function serve(accessLog: AccessLogLevel = 'info') {
  const { lines, logger } = capturedLogger();
  const metrics = createMetrics();
  const routes = new Routes({ prefix: '/api' })
    .post('/:botId/:integrationId/run', botAccess(tokens), (ctx) => {
      const status = Number(ctx.query.status ?? 200);
      if (status === 429) throw new GiError('rate_limited', 'Too many requests', 'Slow down.');
      if (status === 415) throw new GiError('unsupported_media_type', 'Unsupported media type', 'JSON only.');
      if (status === 500) throw new Error('boom');
      if (status === 503) throw new GiError('unavailable', 'Service unavailable', 'The store refuses writes.');
      ctx.set('X-Invocation-Id', 'inv-1');
      ctx.status = status;
      ctx.body = { ok: true };
    })
    .otherMethods('/:botId/:integrationId/run', publicAccess, () => {
      throw new GiError('method_not_allowed', 'Method not allowed', 'POST only.');
    });
  const app = createHttpApp({ logger, metrics, routes: [routes], accessLog });
  const server = createHttpServer(app, { headersMs: 10_000, requestMs: 60_000 }, metrics);
  const call = (path: string, init: { method?: string; headers?: Record<string, string> } = {}) => callInProcess(server, { method: 'POST', path, ...init });
  const series = async () =>
    (await metrics.httpDuration.get()).values.filter((v) => (v as { metricName?: string }).metricName === 'gi_http_request_duration_seconds_count');
  const count = async (labels: Record<string, string>) =>
    (await series()).find((v) => Object.entries(labels).every(([name, value]) => (v.labels as Record<string, unknown>)[name] === value))?.value ?? 0;
  return { call, count, lines, metrics, server };
}

const good = { authorization: 'Bearer good-acme' };

describe('observeRequests', () => {
  it('counts every reply under its real status, route template and method; unknown paths under one label', async () => {
    const { call, count } = serve();
    expect((await call('/api/acme/crm/run', { headers: good })).status).toBe(200);
    expect((await call('/api/acme/crm/run?status=202', { headers: good })).status).toBe(202);
    expect((await call('/api/acme/crm/run')).status).toBe(401);
    expect((await call('/api/other/crm/run', { headers: good })).status).toBe(401);
    expect((await call('/api/acme/crm/run?status=415', { headers: good })).status).toBe(415);
    expect((await call('/api/acme/crm/run?status=429', { headers: good })).status).toBe(429);
    expect((await call('/api/acme/crm/run?status=500', { headers: good })).status).toBe(500);
    expect((await call('/api/acme/crm/run', { method: 'GET' })).status).toBe(405);
    for (const path of ['/nothing', '/api/acme', '/x/y/z?q=1']) expect((await call(path)).status).toBe(404);
    const route = '/api/:botId/:integrationId/run';
    for (const status of ['200', '202', '415', '429', '500']) expect([status, await count({ route, method: 'POST', status })]).toEqual([status, 1]);
    expect(await count({ route, method: 'POST', status: '401' })).toBe(2);
    expect(await count({ route, method: 'GET', status: '405' })).toBe(1);
    expect(await count({ route: 'unmatched', method: 'POST', status: '404' })).toBe(3);
    expect((await (await serve()).metrics.registry.metrics()).includes('/nothing')).toBe(false);
  });

  it('counts requests Node refuses before the app (431) as unmatched, and answers them with a request id', async () => {
    const { count, server } = serve();
    const raw = await sendRawInProcess(server, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(raw).toMatch(/^HTTP\/1\.1 431/);
    expect(raw).toMatch(/X-Request-Id: [0-9a-f-]{36}/);
    expect(await count({ route: 'unmatched', method: 'unknown', status: '431' })).toBe(1);
  });

  it('returns the caller\'s X-Request-Id when acceptable, a new one otherwise, on every reply', async () => {
    const { call } = serve();
    expect((await call('/api/acme/crm/run', { headers: { ...good, 'x-request-id': 'abc-123_X.y:z' } })).headers['x-request-id']).toBe('abc-123_X.y:z');
    expect((await call('/nothing', { headers: { 'x-request-id': 'trace/42' } })).headers['x-request-id']).toBe('trace/42');
    for (const bad of ['', 'a'.repeat(129), 'with space', 'quote"d', 'é']) {
      const reply = await call('/api/acme/crm/run', { headers: { ...good, 'x-request-id': bad } });
      expect(reply.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect((await call('/api/acme/crm/run')).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('writes one access line per request with route, status, duration, request id, bot and invocation', async () => {
    const { call, lines } = serve('info');
    await call('/api/acme/crm/run', { headers: { ...good, 'x-request-id': 'req-1' } });
    await call('/api/acme/crm/run?status=415', { headers: { ...good, 'x-request-id': 'req-2' } });
    const access = lines.filter((line) => line.msg === 'request');
    expect(access).toHaveLength(2);
    expect(access[0]).toMatchObject({ level: 30, requestId: 'req-1', method: 'POST', route: '/api/:botId/:integrationId/run', status: 200, botId: 'acme', integrationId: 'crm', invocationId: 'inv-1' });
    expect(typeof access[0].ms).toBe('number');
    expect(access[1]).toMatchObject({ requestId: 'req-2', status: 415, code: 'unsupported_media_type', integrationId: 'crm' });
  });

  it('writes access lines at debug, or none, as ACCESS_LOG says', async () => {
    const debug = serve('debug');
    await debug.call('/nothing');
    expect(debug.lines.filter((line) => line.msg === 'request').map((line) => line.level)).toEqual([20]);
    const off = serve('off');
    await off.call('/nothing');
    expect(off.lines.filter((line) => line.msg === 'request')).toEqual([]);
  });

  it('logs refusals and server errors with their code, reason and integration, whatever the access level; refusal floods once per window', async () => {
    const { call, lines, metrics } = serve('off');
    for (let i = 0; i < 50; i++) await call('/api/acme/crm/run', { headers: { authorization: 'Bearer expired' } });
    await call('/api/acme/crm/run');
    for (let i = 0; i < 20; i++) await call('/api/acme/crm/run?status=429', { headers: good });
    await call('/api/acme/crm/run?status=500', { headers: good });
    const refused = lines.filter((line) => line.msg === 'authentication refused');
    expect(refused.map((line) => line.reason)).toEqual(['expired', 'missing']);
    expect(refused[0]).toMatchObject({ level: 40, code: 'unauthorized', botId: 'acme', status: 401 });
    expect(lines.filter((line) => line.msg === 'call refused: quota')).toEqual([expect.objectContaining({ code: 'rate_limited', botId: 'acme', integrationId: 'crm' })]);
    expect(lines.find((line) => line.msg === 'request failed')).toMatchObject({ status: 500, code: 'internal', integrationId: 'crm', botId: 'acme' });
    expect(lines.find((line) => line.msg === 'unhandled error')).toMatchObject({ code: 'internal', integrationId: 'crm' });
    const failures = (await metrics.authFailures.get()).values.map((v) => [v.labels.reason, v.value]);
    expect(failures).toEqual(expect.arrayContaining([['expired', 50], ['missing', 1]]));
  });

  it('writes one "request failed" line per window for a flood of 503s (a store refusing every call), each 500 its own', async () => {
    const { call, lines } = serve('off');
    for (let i = 0; i < 30; i++) await call('/api/acme/crm/run?status=503', { headers: good });
    for (let i = 0; i < 2; i++) await call('/api/acme/crm/run?status=500', { headers: good });
    const failed = lines.filter((line) => line.msg === 'request failed');
    expect(failed.map((line) => line.status)).toEqual([503, 500, 500]);
    expect(failed[0]).toMatchObject({ code: 'unavailable', suppressed: 0, botId: 'acme' });
  });
});
