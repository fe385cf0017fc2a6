import type { ConnectorRuntime, Progress, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime } from '@gi/sandbox';
import { EXAMPLE_CREDENTIALS, exampleConnector, serviceAccountConnector, standardWebhookHeaders, startExampleApi, type ExampleApi } from './example-apis';

/** `k=v&k2=v2`, as the gateway stores query parameters and headers. */
const pairs = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .join('&');

/**
 * The examples written with the standard web APIs (fetch, timers, crypto.subtle, URLSearchParams,
 * TextEncoder, btoa), run in the sandbox against the stand-in APIs on 127.0.0.1 (trusted for these
 * runs, and listed in each integration's allowedHosts).
 */
describe('example connectors on the web APIs', () => {
  let runtime: ConnectorRuntime;
  let api: ExampleApi;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 1, http: { trustedAddresses: ['127.0.0.1'] } });
    api = await startExampleApi();
  });
  afterAll(async () => {
    await runtime.close();
    await api.close();
  });
  beforeEach(() => {
    api.calls.length = 0;
  });

  const run = (name: string, code: string, entity: WebhookEntity, options: { rawBody?: string; onProgress?: (p: Progress) => void } = {}) => {
    expect(runtime.compile(code)).toEqual({ ok: true });
    return runtime.run({ cacheKey: `examples/${name}@1`, code, entity, timeoutMs: 20_000, allowedHosts: ['127.0.0.1'], ...options });
  };
  const entity = (body: unknown, params = '', headers = ''): WebhookEntity => ({ RequestParams: params, RequestHeaders: headers, RequestBody: body, ResponseBody: null });

  it('bulk-campaign.js sends one call per recipient with a pause between, waits out a 429 for its Retry-After, and reports progress', async () => {
    api.throttle(2, '1');
    const seen: Progress[] = [];
    const recipients = ['a@example.com', 'b@example.com', 'c@example.com'];
    const result = await run('bulk-campaign.js', exampleConnector('bulk-campaign.js'), entity({ recipients, text: 'Hello', apiBase: api.base, pauseMs: 300 }), {
      onProgress: (p) => seen.push(p),
    });
    expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Completed', Sent: 3, Failed: [] } });
    const sends = api.calls.filter((call) => call.path === '/messages');
    expect(sends.map((call) => JSON.parse(call.body).to)).toEqual([recipients[0], recipients[0], recipients[0], recipients[1], recipients[2]]);
    const gaps = sends.slice(1).map((call, i) => call.at - sends[i].at);
    // Two waits of Retry-After: 1 s, then the pauses between recipients.
    expect(gaps[0]).toBeGreaterThanOrEqual(950);
    expect(gaps[1]).toBeGreaterThanOrEqual(950);
    expect(gaps[2]).toBeGreaterThanOrEqual(280);
    expect(gaps[3]).toBeGreaterThanOrEqual(280);
    expect(seen.at(-1)).toEqual({ percent: 100, message: '3 of 3 sent' });
    expect(result.logs.map((line) => line.message)).toEqual(expect.arrayContaining(['429 for a@example.com: waiting 1000 ms (attempt 1)']));
  }, 30_000);

  it('bulk-campaign.js gives up on a recipient after five 429s and says so in its summary', async () => {
    api.throttle(5, '0');
    const result = await run('bulk-campaign.js', exampleConnector('bulk-campaign.js'), entity({ recipients: ['x@example.com', 'y@example.com'], text: 'Hi', apiBase: api.base, pauseMs: 0 }));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { Sent: 1, Failed: [{ to: 'x@example.com', status: 429 }] } });
  }, 30_000);

  it('signed-call.js signs timestamp and body with HMAC-SHA256, sends Basic auth, and passes the caller\'s X-Request-Id on', async () => {
    const code = exampleConnector('signed-call.js');
    const result = await run('signed-call.js', code, entity({ orderId: 7 }, pairs({ apiBase: api.base, source: 'crm' }), pairs({ 'X-Request-Id': 'req 1+2', Accept: '*/*' })));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Forwarded', Reference: expect.stringMatching(/^R-/) } });
    const [call] = api.calls;
    expect(call).toMatchObject({ method: 'POST', path: '/v1/orders?source=crm', body: '{"order":{"orderId":7}}' });
    expect(call.headers).toMatchObject({ authorization: EXAMPLE_CREDENTIALS.basic, 'x-request-id': 'req 1+2' });
    // A wrong key is refused by the API, and the connector answers with its RaiseError.
    const wrongKey = code.replace('"change-me-too"', '"another-key"');
    expect(await run('signed-call.js', wrongKey, entity({ orderId: 7 }, pairs({ apiBase: api.base }), ''))).toMatchObject({ kind: 'raised', title: 'Downstream error' });
  });

  it('service-account.js signs an RS256 JWT, exchanges it for a token, and calls the API with it', async () => {
    const params = pairs({ tokenUrl: `${api.base}/token`, apiBase: api.base });
    const result = await run('service-account.js', serviceAccountConnector(), entity({ orderId: 9 }, params));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Created', Order: { received: { orderId: 9 } } } });
    expect(api.calls.map((call) => `${call.method} ${call.path} ${call.headers.authorization ?? ''}`)).toEqual(['POST /token ', 'POST /v1/orders Bearer at-1']);
    expect(api.calls[0].headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    // The placeholder key is not a key: the run fails naming the import, before any call.
    api.calls.length = 0;
    const unconfigured = await run('service-account.js', exampleConnector('service-account.js'), entity({ orderId: 9 }, params));
    expect(unconfigured).toMatchObject({ kind: 'failed', reason: 'threw' });
    expect(api.calls).toEqual([]);
  });

  it('verify-signature.js accepts the body as signed, and answers 422 to a changed body, a wrong signature or a stale call', async () => {
    const code = exampleConnector('verify-signature.js');
    const raw = '{"type":"invoice.paid", "amount": 12.50}';
    const verify = (body: string, headers: Record<string, string>) => run('verify-signature.js', code, entity(JSON.parse(body), '', pairs(headers)), { rawBody: body });
    expect(await verify(raw, standardWebhookHeaders(raw))).toMatchObject({ kind: 'ok', responseBody: { Status: 'Verified', Type: 'invoice.paid' } });
    // The same data serialized again is not what was signed.
    const reserialized = JSON.stringify(JSON.parse(raw));
    expect(await verify(reserialized, standardWebhookHeaders(raw))).toMatchObject({ kind: 'raised', title: 'Invalid signature' });
    expect(await verify(raw, standardWebhookHeaders(raw, 'whsec_' + Buffer.from('another secret').toString('base64')))).toMatchObject({ kind: 'raised', title: 'Invalid signature' });
    const stale = standardWebhookHeaders(raw, undefined, Math.floor(Date.now() / 1000) - 3600);
    expect(await verify(raw, stale)).toMatchObject({ kind: 'raised', title: 'Stale call' });
    // Several signatures (a secret being rotated): one match is enough; garbage is skipped.
    const both = standardWebhookHeaders(raw);
    expect(await verify(raw, { ...both, 'webhook-signature': `v1,!!notbase64 v1,${Buffer.alloc(32).toString('base64')} ${both['webhook-signature']}` })).toMatchObject({ kind: 'ok' });
    expect(await verify(raw, { 'webhook-signature': both['webhook-signature'] })).toMatchObject({ kind: 'raised', title: 'Unsigned call' });
  });
});
