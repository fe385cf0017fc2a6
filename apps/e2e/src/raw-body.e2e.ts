import { createHmac } from 'node:crypto';
import { serviceWithConnector } from './deployed-connector';
import { MULTIPART, multipartBody } from './multipart';

const SECRET = 'whsec_raw_body_e2e';

/**
 * A receiver of signed webhooks, Stripe style: `Signature: t=<time>,v1=<hex HMAC-SHA256 of "<time>." and
 * the body's bytes>`, checked with crypto.subtle over Context.GetRawRequestBody({ encoding: 'bytes' }).
 */
const VERIFIER = `
const entity = Context.GetRequestEntity();
const headers = new Map(entity.RequestHeaders.split('&').map((pair) => pair.split('=').map(decodeURIComponent)));
const fields = Object.fromEntries((headers.get('Signature') ?? '').split(',').map((part) => part.split('=')));
const ascii = (text) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const body = new Uint8Array(Context.GetRawRequestBody({ encoding: 'bytes' }));
const prefix = ascii(fields.t + '.');
const signed = new Uint8Array(prefix.length + body.length);
signed.set(prefix);
signed.set(body, prefix.length);
const key = await crypto.subtle.importKey('raw', ascii(${JSON.stringify(SECRET)}), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
const sent = Uint8Array.from((fields.v1 ?? '').match(/../g) ?? [], (hex) => parseInt(hex, 16));
if (!(await crypto.subtle.verify('HMAC', key, sent, signed))) Context.RaiseError('Bad signature', 'The Signature header does not match the body.');
entity.ResponseBody = { verified: true, bytes: body.length, event: typeof entity.RequestBody === 'object' ? entity.RequestBody.event : entity.RequestBody };
Context.SetResponseEntity(entity);
`;

const signature = (body: Buffer, t = '1700000000') => `t=${t},v1=${createHmac('sha256', SECRET).update(Buffer.concat([Buffer.from(`${t}.`), body])).digest('hex')}`;

describe('the raw request body in connectors', () => {
  const deployed = serviceWithConnector('acme', 'Order', 'verify', VERIFIER);

  const send = (body: Buffer, contentType: string, sig: string) =>
    deployed.api.call(deployed.url(), deployed.token, { body, headers: { 'content-type': contentType, Signature: sig } });

  it('lets a connector verify an HMAC signature over the exact bytes sent, and refuse a body that was altered with 422', async () => {
    // Spacing, key order, escapes and non-ASCII text as the producer wrote them: re-serialising the parsed body would change the bytes.
    const body = Buffer.from('{ "event":"order.paid" ,\n  "customer" : "Zo\\u00eb 🚀 raw-marker-5f1c", "amount": 1.50 }\r\n');
    const ok = await send(body, 'application/json', signature(body));
    expect([ok.status, ok.json]).toEqual([200, { verified: true, bytes: body.length, event: 'order.paid' }]);

    const reserialised = Buffer.from(JSON.stringify(JSON.parse(body.toString())));
    const altered = await send(reserialised, 'application/json', signature(body));
    expect(altered.status).toBe(422);
    expect(altered.json).toMatchObject({ title: 'Bad signature', detail: 'The Signature header does not match the body.' });

    // Kept apart from the entity: the control API shows the parsed RequestBody, not the raw body, and the service never logs it.
    const detail = await deployed.api.admin('GET', `/bots/acme/invocations/${ok.headers.get('x-invocation-id')}`);
    expect(detail.json.entity.RequestBody).toEqual(JSON.parse(body.toString()));
    expect(JSON.stringify(detail.json)).not.toContain('Zo\\\\u00eb');
    expect(Object.keys(detail.json)).not.toContain('rawBody');
    expect(deployed.service.output.join('\n')).not.toContain('raw-marker-5f1c');
  });

  it('gives the bytes of a text body as sent, a byte order mark included, in async runs too', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('order.paid')]);
    const started = await deployed.api.call(deployed.url('asyncResponse=true'), deployed.token, {
      body,
      headers: { 'content-type': 'text/plain; charset=utf-8', Signature: signature(body) },
    });
    expect(started.status).toBe(202);
    const polled = await deployed.api.poll('acme', deployed.token, started.json.invocationId, 'waitSeconds=30');
    // RequestBody is the text without the mark; the signature covers every byte.
    expect([polled.status, polled.json]).toEqual([200, { verified: true, bytes: body.length, event: 'order.paid' }]);
  });

  it('gives null for a file transfer, which has no single body', async () => {
    await deployed.api.setUp('acme', 'Order', 'raw', `Context.SetResponseEntity({ ResponseBody: { raw: Context.GetRawRequestBody() } });`);
    const upload = await deployed.api.call(deployed.api.webhookUrl('acme', 'Order', 'raw', '', 'GenericIntegrationFileTransfer'), deployed.token, {
      headers: { 'content-type': MULTIPART },
      body: multipartBody([
        { name: 'orderId', data: '7' },
        { name: 'invoice', filename: 'invoice.txt', contentType: 'text/plain', data: 'hello' },
      ]),
    });
    expect([upload.status, upload.json]).toEqual([200, { raw: null }]);
    const empty = await deployed.api.call(deployed.api.webhookUrl('acme', 'Order', 'raw'), deployed.token);
    expect([empty.status, empty.json]).toEqual([200, { raw: '' }]);
  });
  it('hands a large JSON body to the connector to be read lazily, member by member, in sync and async runs', async () => {
    const order = { orderId: 42, lines: Array.from({ length: 300 }, (_, i) => ({ sku: `A-${i}`, qty: i % 7, note: 'say "hi" {not a bracket}' })), customer: { name: 'Zoë' } };
    const body = Buffer.from(JSON.stringify(order, null, 1));
    expect(body.length).toBeGreaterThan(4096);
    await deployed.api.setUp(
      'acme',
      'Order',
      'large',
      `const body = Context.GetRequestEntity().RequestBody;
      const id = body.orderId;
      // Not read yet: still an accessor; read: a plain value.
      const lazy = typeof Object.getOwnPropertyDescriptor(body, 'lines').get === 'function';
      const whole = JSON.stringify(body) === JSON.stringify(JSON.parse(Context.GetRawRequestBody()));
      Context.SetResponseEntity({ ResponseBody: { id, lazy, whole, plain: 'value' in Object.getOwnPropertyDescriptor(body, 'lines'), name: body.customer.name } });`,
    );
    const expected = { id: 42, lazy: true, whole: true, plain: true, name: 'Zoë' };
    const sync = await deployed.api.call(deployed.api.webhookUrl('acme', 'Order', 'large'), deployed.token, { body, headers: { 'content-type': 'application/json' } });
    expect([sync.status, sync.json]).toEqual([200, expected]);
    const started = await deployed.api.call(deployed.api.webhookUrl('acme', 'Order', 'large', 'asyncResponse=true'), deployed.token, { body, headers: { 'content-type': 'application/json' } });
    expect(started.status).toBe(202);
    const polled = await deployed.api.poll('acme', deployed.token, started.json.invocationId, 'waitSeconds=30');
    expect([polled.status, polled.json]).toEqual([200, expected]);
  });
});
