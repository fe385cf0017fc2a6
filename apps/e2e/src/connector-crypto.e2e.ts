import { createHmac, generateKeyPairSync, verify } from 'node:crypto';
import { Api } from './api-client';
import { startService, type ServiceProcess } from './service-process';

/** `crypto` in connectors run by the built service (on its executor's worker threads). */
describe('crypto in connectors', () => {
  let service: ServiceProcess;
  let api: Api;
  beforeAll(async () => {
    service = await startService();
    api = new Api(service.baseUrl);
  });
  afterAll(() => service.dispose());

  /** Signs `${timestamp}.${orderId}` with HMAC-SHA256 (the webhook's secret) and with an ECDSA key it makes, and checks a signature the caller sent. */
  const signer = `
    const e = Context.GetRequestEntity();
    const headers = Object.fromEntries(e.RequestHeaders.split('&').map((pair) => pair.split('=').map(decodeURIComponent)));
    const bytes = (text) => new Uint8Array(Array.from(text, (c) => c.charCodeAt(0)));
    const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
    const message = bytes(headers['X-Timestamp'] + '.' + e.RequestBody.orderId);
    const secret = await crypto.subtle.importKey('raw', bytes('whsec_e2e'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    const expected = headers['X-Signature'].match(/../g).map((h) => parseInt(h, 16));
    if (!(await crypto.subtle.verify('HMAC', secret, new Uint8Array(expected), message))) Context.RaiseError('Bad signature', 'The X-Signature header does not match.');
    const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
    e.ResponseBody = {
      hmac: hex(await crypto.subtle.sign('HMAC', secret, message)),
      ecdsa: hex(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, message)),
      spki: hex(await crypto.subtle.exportKey('spki', pair.publicKey)),
      id: crypto.randomUUID(),
    };
    Context.SetResponseEntity(e);`;

  it('signs and verifies at the host, and each call gets its own keys and random values', async () => {
    const token = await api.setUp('acme', 'Order', 'signed', signer);
    const call = (orderId: number, signature?: string) => {
      const expected = createHmac('sha256', 'whsec_e2e').update(`1700000000.${orderId}`).digest('hex');
      return api.postJson(api.webhookUrl('acme', 'Order', 'signed'), token, { orderId }, { 'X-Timestamp': '1700000000', 'X-Signature': signature ?? expected });
    };
    const [first, second] = await Promise.all([call(1), call(2)]);
    for (const [reply, orderId] of [
      [first, 1],
      [second, 2],
    ] as const) {
      expect(reply.status).toBe(200);
      const message = Buffer.from(`1700000000.${orderId}`);
      expect(reply.json.hmac).toBe(createHmac('sha256', 'whsec_e2e').update(message).digest('hex'));
      const publicKey = { key: Buffer.from(reply.json.spki, 'hex'), format: 'der', type: 'spki', dsaEncoding: 'ieee-p1363' } as const;
      expect(verify('sha256', message, publicKey, Buffer.from(reply.json.ecdsa, 'hex'))).toBe(true);
    }
    expect(first.json.id).not.toBe(second.json.id);
    expect(first.json.spki).not.toBe(second.json.spki);
    const refused = await call(3, '00'.repeat(32));
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({ title: 'Bad signature' });
  });

  it('counts crypto work as CPU time of the run', async () => {
    const token = await api.setUp(
      'acme',
      'Order',
      'grinder',
      `const k = await crypto.subtle.importKey('raw', new Uint8Array(8), 'PBKDF2', false, ['deriveBits']);
       for (;;) await crypto.subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-512', salt: new Uint8Array(8), iterations: 1e6 }, k, 512);`,
      { limits: { cpuSeconds: 1 } },
    );
    const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'grinder'), token, {});
    expect(reply.status).toBe(500);
    expect(reply.json.detail).toMatch(/CPU time limit of 1 s/);
  });

  it('keeps a key generated in one call out of every other call', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const keeper = `
      const e = Context.GetRequestEntity();
      const found = typeof globalThis.kept;
      globalThis.kept = await crypto.subtle.importKey('spki', new Uint8Array(e.RequestBody.spki), { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);
      e.ResponseBody = { found, kept: typeof globalThis.kept };
      Context.SetResponseEntity(e);`;
    const token = await api.setUp('other', 'Order', 'keeper', keeper);
    const body = { spki: [...publicKey.export({ format: 'der', type: 'spki' })] };
    for (let i = 0; i < 3; i++) {
      const reply = await api.postJson(api.webhookUrl('other', 'Order', 'keeper'), token, body);
      expect(reply).toMatchObject({ status: 200, json: { found: 'undefined', kept: 'object' } });
    }
  });
});
