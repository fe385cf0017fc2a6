import { createHmac } from 'node:crypto';
import type { ConnectorRunRequest, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

/** A body as a producer sends it: JSON spaced its own way, non-ASCII text, a byte order mark. */
const BODY = '\uFEFF{ "event" : "order.paid",\r\n  "customer": "Zoë 🚀" }';
const entity: WebhookEntity = { RequestParams: '', RequestHeaders: '', RequestBody: { event: 'order.paid', customer: 'Zoë 🚀' }, ResponseBody: null };

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Context.GetRawRequestBody (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  const run = (code: string, rawBody: string | null = BODY, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: 'bot/raw@1', code, entity, rawBody, timeoutMs: 5000, allowedHosts: [], ...extra });

  it('gives the body exactly as sent: text by default, its UTF-8 bytes as an ArrayBuffer or in base64', async () => {
    const result = await run(`
      const text = Context.GetRawRequestBody();
      const bytes = Context.GetRawRequestBody({ encoding: 'bytes' });
      Context.SetResponseEntity({ ResponseBody: {
        text,
        same: text === Context.GetRawRequestBody({ encoding: 'utf8' }),
        isBuffer: bytes instanceof ArrayBuffer,
        bytes: Array.from(new Uint8Array(bytes)),
        b64: Context.GetRawRequestBody({ encoding: 'base64' }),
      } });`);
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: { text: BODY, same: true, isBuffer: true, bytes: [...Buffer.from(BODY, 'utf8')], b64: Buffer.from(BODY, 'utf8').toString('base64') },
    });
  });

  it('gives a JSON body that lies in the entity as sent (handed to the thread once) exactly as sent', async () => {
    const sent = ' { "orderId" : 7.0, "note": "Zoë 🚀" }\r\n';
    const entityJson = `{"RequestParams":"","RequestHeaders":"","RequestBody":${sent},"ResponseBody":null}`;
    const result = await runtime.run({
      cacheKey: 'bot/raw@1',
      code: `Context.SetResponseEntity({ ResponseBody: [Context.GetRawRequestBody(), Context.GetRequestEntity().RequestBody] });`,
      entityJson,
      rawBody: sent,
      timeoutMs: 5000,
      allowedHosts: [],
    });
    expect(result).toMatchObject({ kind: 'ok', responseBody: [sent, { orderId: 7, note: 'Zoë 🚀' }] });
  });

  it('lets a connector check an HMAC signature over the exact bytes with crypto.subtle', async () => {
    const signature = createHmac('sha256', 'whsec_test').update(Buffer.from(BODY, 'utf8')).digest('hex');
    const code = (sent: string) => `
      const secret = new Uint8Array(Array.from('whsec_test', (c) => c.charCodeAt(0)));
      const key = await crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
      const sent = ${JSON.stringify(sent)}.match(/../g).map((h) => parseInt(h, 16));
      const ok = await crypto.subtle.verify('HMAC', key, new Uint8Array(sent), Context.GetRawRequestBody({ encoding: 'bytes' }));
      if (!ok) Context.RaiseError('Bad signature', 'The signature does not match the body.');
      Context.SetResponseEntity({ ResponseBody: { verified: ok } });`;
    expect(await run(code(signature))).toMatchObject({ kind: 'ok', responseBody: { verified: true } });
    // The parsed body, serialised again, is not what was signed.
    expect(await run(code(signature), JSON.stringify(entity.RequestBody))).toMatchObject({ kind: 'raised', title: 'Bad signature' });
  });

  it('gives null where the request had no single body (a file transfer), and an empty body as empty', async () => {
    const code = `Context.SetResponseEntity({ ResponseBody: [Context.GetRawRequestBody(), Context.GetRawRequestBody({ encoding: 'bytes' })] });`;
    expect(await run(code, null)).toMatchObject({ kind: 'ok', responseBody: [null, null] });
    expect(await runtime.run({ cacheKey: 'bot/raw@1', code, entity, timeoutMs: 5000, allowedHosts: [] })).toMatchObject({ kind: 'ok', responseBody: [null, null] });
    expect(await run(`Context.SetResponseEntity({ ResponseBody: [Context.GetRawRequestBody(), Context.GetRawRequestBody({ encoding: 'bytes' }).byteLength] });`, '')).toMatchObject({
      kind: 'ok',
      responseBody: ['', 0],
    });
  });

  it('refuses options it cannot use with a TypeError the connector can catch', async () => {
    const result = await run(`
      const errors = [];
      for (const options of [{ encoding: 'latin1' }, 'bytes', [1], { encoding: 7 }, () => 'bytes']) {
        try { Context.GetRawRequestBody(options); } catch (e) { errors.push(e.name + ': ' + e.message); }
      }
      Context.SetResponseEntity({ ResponseBody: errors });`);
    expect(result).toMatchObject({ kind: 'ok' });
    const errors = result.kind === 'ok' ? (result.responseBody as string[]) : [];
    expect(errors).toEqual([
      "TypeError: Context.GetRawRequestBody encoding must be 'utf8', 'base64' or 'bytes'.",
      'TypeError: Context.GetRawRequestBody options must be an object like { encoding }.',
      'TypeError: Context.GetRawRequestBody options must be an object like { encoding }.',
      "TypeError: Context.GetRawRequestBody encoding must be 'utf8', 'base64' or 'bytes'.",
      'TypeError: Context.GetRawRequestBody options must be an object like { encoding }.',
    ]);
  });

  it('gives each run its own body', async () => {
    const echo = `Context.SetResponseEntity({ ResponseBody: Context.GetRawRequestBody() });`;
    const [first, second] = await Promise.all([run(echo, 'first'), run(echo, 'second')]);
    expect([first, second]).toMatchObject([{ responseBody: 'first' }, { responseBody: 'second' }]);
  });

  it("refuses a body over half the run's memory limit with an error the connector can catch, and stops one that does not fit at the limit", async () => {
    const limits = { memoryBytes: 16 * 1024 * 1024 };
    const size = `
      const sizes = [];
      for (const encoding of ['utf8', 'bytes']) {
        try { sizes.push(Context.GetRawRequestBody({ encoding }).length); } catch (e) { sizes.push(e.name + ': ' + e.message); }
      }
      Context.SetResponseEntity({ ResponseBody: sizes });`;
    const refused = await run(size, 'x'.repeat(24 * 1024 * 1024), { limits });
    const message = "RangeError: The request body (24 MiB) is larger than half the connector's memory limit of 16 MiB (limits.memoryMiB), so it cannot be read; raise the limit.";
    expect(refused).toMatchObject({ kind: 'ok', responseBody: [message, message] });
    const copies = await run(`const all = []; for (;;) all.push(Context.GetRawRequestBody());`, 'x'.repeat(4 * 1024 * 1024), { limits });
    expect(copies).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/memory limit of 16 MiB/) });
  });
});
