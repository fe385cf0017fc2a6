import { Api } from './api-client';
import { busy, echo, example, loops, mirror, raises, throws } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

describe('public webhook API (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const url = (integration: string, query = '') => api.webhookUrl('acme', 'Order', integration, query);

  beforeAll(async () => {
    service = await startService({ env: { SYNC_TIMEOUT_SECONDS: '2', MAX_BODY_SIZE: '64kb' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    for (const [id, code, extra] of [
      ['echo', echo, {}],
      ['mirror', mirror, {}],
      ['busy', busy, {}],
      ['raises', raises, {}],
      ['throws', throws, {}],
      ['loops', loops, { timeoutSeconds: 1 }],
    ] as const) {
      expect((await api.admin('PUT', `/bots/acme/integrations/${id}`, { entityName: 'Order', code, ...extra })).status).toBe(200);
    }
  });
  afterAll(() => service.dispose());

  describe('sync calls', () => {
    it('runs the connector and answers its ResponseBody as JSON', async () => {
      const reply = await api.postJson(url('ack'), token, { orderId: 42 });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(reply.json).toEqual({ Status: 'Accepted', Message: 'order 42' });
    });

    it('stores params (order, repeats, no control params), headers (no secrets) and the body in the entity', async () => {
      const reply = await api.call(url('echo', 'b=2&a=1&a=3&responseContentType=application%2Fjson&x=%20y'), token, {
        body: JSON.stringify({ orderId: 1 }),
        headers: { 'content-type': 'application/json', 'X-Custom-Header': 'Value 1', Cookie: 'session=secret' },
      });
      expect(reply.status).toBe(200);
      expect(reply.json.params).toBe('b=2&a=1&a=3&x=%20y');
      expect(reply.json.body).toEqual({ orderId: 1 });
      expect(reply.json.headers).toContain('X-Custom-Header=Value%201');
      expect(reply.json.headers).not.toMatch(/authorization|cookie|secret/i);
      expect(reply.json.headers).not.toContain(token);
    });

    it('keeps text and XML bodies as strings, forms as objects, an empty body as null', async () => {
      const text = await api.call(url('mirror', 'responseContentType=text/plain'), token, { body: 'hello', headers: { 'content-type': 'text/plain' } });
      expect([text.status, text.text, text.headers.get('content-type')]).toEqual([200, 'hello', 'text/plain; charset=utf-8']);
      const xml = await api.call(url('mirror', 'responseContentType=application/xml'), token, { body: '<a>1</a>', headers: { 'content-type': 'application/xml' } });
      expect(xml.text).toBe('<a>1</a>');
      const form = await api.call(url('mirror'), token, { body: 'a=1&a=2&b=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.json).toEqual({ a: ['1', '2'], b: 'x' });
      const empty = await api.call(url('mirror'), token, {});
      expect([empty.status, empty.text]).toEqual([200, '{}']);
    });

    it('renders objects as XML when asked', async () => {
      const reply = await api.postJson(url('ack', 'responseContentType=text/xml'), token, { orderId: 5 });
      expect(reply.headers.get('content-type')).toBe('text/xml; charset=utf-8');
      expect(reply.text).toContain('<Status>Accepted</Status><Message>order 5</Message>');
    });

    it('answers 422 with the title and message of Context.RaiseError', async () => {
      const reply = await api.postJson(url('raises'), token, {});
      expect(reply.status).toBe(422);
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
      expect(reply.json).toMatchObject({ title: 'Order rejected', detail: 'Order 42 has no lines', status: 422 });
      expect(reply.json.invocationId).toEqual(expect.any(String));
    });

    it('answers 500 without the connector\'s error text when it throws', async () => {
      const reply = await api.postJson(url('throws'), token, {});
      expect(reply.status).toBe(500);
      expect(reply.text).not.toContain('hunter2');
      const details = await api.admin('GET', `/bots/acme/invocations/${reply.json.invocationId}`);
      expect(JSON.stringify(details.json.logs)).toContain('hunter2');
    });

    it('answers 504 when the connector runs past its timeout, and the service stays healthy', async () => {
      const reply = await api.postJson(url('loops'), token, {});
      expect(reply.status).toBe(504);
      expect(reply.json.title).toBe('Connector timed out');
      expect((await api.postJson(url('ack'), token, { orderId: 1 })).status).toBe(200);
    });

    it('answers 504 with the invocationId when the sync wait runs out, and the result can be polled later', async () => {
      const reply = await api.postJson(url('busy', 'ms=3500'), token, {});
      expect(reply.status).toBe(504);
      expect(reply.json.invocationId).toEqual(expect.any(String));
      expect(reply.headers.get('location')).toContain(`GetGenericIntegrationResponse?invocationId=${reply.json.invocationId}`);
      const polled = await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=10');
      expect(polled.status).toBe(200);
      expect(polled.json).toEqual({ done: true, ms: 3500 });
    });
  });

  describe('async calls and polling', () => {
    it('answers 202 with invocationId and Location at once, then the poll gives the sync body', async () => {
      const started = await api.postJson(url('ack', 'asyncResponse=true'), token, { orderId: 9 });
      expect(started.status).toBe(202);
      expect(started.json).toEqual({ invocationId: expect.any(String), status: 'Running' });
      expect(started.headers.get('location')).toBe(`/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${started.json.invocationId}`);
      const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=10');
      expect(polled.status).toBe(200);
      expect(polled.json).toEqual({ Status: 'Accepted', Message: 'order 9' });
      const again = await api.poll('acme', token, started.json.invocationId, 'responseContentType=text/plain');
      expect(again.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    });

    it('answers 202 Running with Retry-After while the job runs', async () => {
      const started = await api.postJson(url('busy', 'asyncResponse=true&ms=1500'), token, {});
      const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=0');
      expect(polled.status).toBe(202);
      expect(polled.json).toEqual({
        invocationId: started.json.invocationId,
        status: expect.stringMatching(/^(Queued|Running)$/),
        message: 'The job is not yet complete.',
        attempt: expect.any(Number),
        startedAt: polled.json.status === 'Running' ? expect.any(String) : null,
      });
      expect(Number(polled.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('wakes a held poll as soon as the job completes', async () => {
      const started = await api.postJson(url('busy', 'asyncResponse=true&ms=1000'), token, {});
      const before = Date.now();
      const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=30');
      const waited = Date.now() - before;
      expect(polled.status).toBe(200);
      // Woken by the completion event: far sooner than the 30 s hold.
      expect(waited).toBeLessThan(5000);
    });

    it('gives failed async runs the same error as a sync call would', async () => {
      const started = await api.postJson(url('raises', 'asyncResponse=true'), token, {});
      const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=10');
      expect(polled.status).toBe(422);
      expect(polled.json).toMatchObject({ title: 'Order rejected', detail: 'Order 42 has no lines', invocationId: started.json.invocationId });
    });

    it('answers 404 for unknown invocations and for another bot\'s', async () => {
      expect((await api.poll('acme', token, 'no-such-id')).status).toBe(404);
      const started = await api.postJson(url('ack', 'asyncResponse=true'), token, { orderId: 1 });
      const otherToken = await api.setUp('other', 'Order', 'ack', example('ack'));
      expect((await api.poll('other', otherToken, started.json.invocationId, 'waitSeconds=0')).status).toBe(404);
    });

    it('validates the poll query', async () => {
      const base = `${service.baseUrl}/api/Platform/acme/GetGenericIntegrationResponse`;
      const auth = { headers: { authorization: `Bearer ${token}` } };
      expect((await fetch(base, auth)).status).toBe(400);
      expect((await fetch(`${base}?invocationId=x&waitSeconds=61`, auth)).status).toBe(400);
      expect((await fetch(`${base}?invocationId=x&waitSeconds=abc`, auth)).status).toBe(400);
    });
  });

  describe('bad input', () => {
    it('refuses an asyncResponse other than true/false', async () => {
      const reply = await api.postJson(url('ack', 'asyncResponse=yes'), token, {});
      expect(reply.status).toBe(400);
      expect(reply.json.detail).toContain('asyncResponse');
    });

    it('refuses an invalid responseContentType', async () => {
      expect((await api.postJson(url('ack', 'responseContentType=nonsense'), token, {})).status).toBe(400);
    });

    it('refuses malformed JSON with 400 and stores nothing', async () => {
      const before = (await api.admin('GET', '/bots/acme/invocations?limit=500')).json.invocations.length;
      const reply = await api.call(url('ack'), token, { body: '{"orderId": ', headers: { 'content-type': 'application/json' } });
      expect(reply.status).toBe(400);
      expect(reply.json.type).toBe('urn:gi:problem:bad-request');
      expect((await api.admin('GET', '/bots/acme/invocations?limit=500')).json.invocations.length).toBe(before);
    });

    it.each(['{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '[{"__proto__":{"x":1}}]'])(
      'refuses prototype pollution %s',
      async (body) => {
        const reply = await api.call(url('echo'), token, { body, headers: { 'content-type': 'application/json' } });
        expect(reply.status).toBe(400);
        expect((await api.postJson(url('ack'), token, { orderId: 2 })).json).toEqual({ Status: 'Accepted', Message: 'order 2' });
      },
    );

    it('refuses a body over the limit with 413', async () => {
      const reply = await api.postJson(url('ack'), token, { blob: 'x'.repeat(70 * 1024) });
      expect(reply.status).toBe(413);
      expect(reply.json.title).toBe('Payload too large');
    });

    it('sends binary bodies to the file endpoint with 415', async () => {
      const reply = await api.call(url('ack'), token, { body: 'abc', headers: { 'content-type': 'application/octet-stream' } });
      expect(reply.status).toBe(415);
    });

    it('answers 415 on the file endpoint for non-multipart requests', async () => {
      const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', '', 'GenericIntegrationFileTransfer'), token, {});
      expect(reply.status).toBe(415);
    });

    it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('answers %s with 405 and Allow: POST', async (method) => {
      const reply = await api.call(url('ack'), token, { method });
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toBe('POST');
      expect(reply.headers.get('content-type')).toBe('application/problem+json');
    });

    it('answers 404 for an unknown integration, an unknown entity and an unknown path', async () => {
      expect((await api.postJson(url('missing'), token, {})).status).toBe(404);
      expect((await api.postJson(api.webhookUrl('acme', 'Invoice', 'ack'), token, {})).status).toBe(404);
      expect((await api.call(`${service.baseUrl}/api/Platform/acme/nothing`, token)).status).toBe(404);
    });
  });
});
