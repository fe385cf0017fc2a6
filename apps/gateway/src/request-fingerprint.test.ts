import { createHash } from 'node:crypto';
import { deliveryKey, requestFingerprint } from './request-fingerprint';
import type { FingerprintedRequest } from './request-fingerprint';

const request: FingerprintedRequest = {
  botId: 'acme',
  entityName: 'Order',
  integrationId: 'ack',
  endpoint: 'GenericIntegration',
  rawQuery: 'a=1&b=2',
  contentType: 'application/json',
  body: '{"orderId":42}',
};
const file = { Id: 'f1', FileName: 'a.pdf', ContentType: 'application/pdf', Size: 3, Sha256: 'ab'.repeat(32), PartName: 'doc' };
const upload: FingerprintedRequest = {
  ...request,
  endpoint: 'GenericIntegrationFileTransfer',
  contentType: 'multipart/form-data; boundary=one',
  body: { fields: { orderId: '42' }, files: [file] },
};

describe('requestFingerprint', () => {
  it('is the SHA-256 its comment gives, so a key stored by an earlier release still matches its repeats', () => {
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const parts = ['POST', 'acme/Order/ack/GenericIntegration', 'a=1&b=2', 'application/json', sha256('{"orderId":42}')];
    expect(requestFingerprint(request)).toBe(sha256(JSON.stringify(parts)));
  });

  it('is a SHA-256 that repeats for the same request', () => {
    expect(requestFingerprint(request)).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint({ ...request })).toBe(requestFingerprint(request));
  });

  it.each([
    ['bot', { botId: 'other' }],
    ['entity', { entityName: 'Invoice' }],
    ['integration', { integrationId: 'nack' }],
    ['endpoint', { endpoint: 'GenericIntegrationFileTransfer' as const }],
    ['query', { rawQuery: 'b=2&a=1' }],
    ['async mode', { rawQuery: 'a=1&b=2&asyncResponse=true' }],
    ['content type', { contentType: 'text/plain' }],
    ['body', { body: '{"orderId":43}' }],
  ])('differs with another %s', (_part, change) => {
    expect(requestFingerprint({ ...request, ...change })).not.toBe(requestFingerprint(request));
  });

  it('ignores Content-Type parameters such as a multipart boundary', () => {
    expect(requestFingerprint({ ...upload, contentType: 'multipart/form-data; boundary=two' })).toBe(requestFingerprint(upload));
    expect(requestFingerprint({ ...request, contentType: 'application/json; charset=utf-8' })).toBe(requestFingerprint(request));
  });

  it('counts an upload by its fields and its files\' names, types and SHA-256s, not by their storage ids', () => {
    expect(requestFingerprint({ ...upload, body: { fields: { orderId: '42' }, files: [{ ...file, Id: 'f2' }] } })).toBe(requestFingerprint(upload));
    for (const change of [{ Sha256: 'cd'.repeat(32) }, { FileName: 'b.pdf' }, { PartName: 'other' }, { ContentType: 'text/plain' }]) {
      expect(requestFingerprint({ ...upload, body: { fields: { orderId: '42' }, files: [{ ...file, ...change }] } })).not.toBe(requestFingerprint(upload));
    }
    expect(requestFingerprint({ ...upload, body: { fields: { orderId: '43' }, files: [file] } })).not.toBe(requestFingerprint(upload));
  });
});

describe('deliveryKey', () => {
  const verified = (deliveryId: string, scheme: 'github' | 'stripe' = 'github') => ({ scheme, deliveryId });

  it('names the integration and the delivery while that fits a key, and is its SHA-256 beyond', () => {
    expect(deliveryKey('ack', verified('d-1')).key).toBe('delivery:ack:d-1');
    const longest = 'x'.repeat(255 - 'delivery:ack:'.length);
    expect(deliveryKey('ack', verified(longest)).key).toBe(`delivery:ack:${longest}`);
    const plain = `delivery:ack:${longest}y`;
    expect(deliveryKey('ack', verified(`${longest}y`)).key).toBe(`delivery:sha256:${createHash('sha256').update(plain).digest('hex')}`);
  });

  it('fingerprints the integration and the scheme, not the delivery', () => {
    const { fingerprint } = deliveryKey('ack', verified('d-1'));
    expect(deliveryKey('ack', verified('d-2')).fingerprint).toBe(fingerprint);
    expect(deliveryKey('nack', verified('d-1')).fingerprint).not.toBe(fingerprint);
    expect(deliveryKey('ack', verified('d-1', 'stripe')).fingerprint).not.toBe(fingerprint);
    expect(fingerprint).toBe(createHash('sha256').update(JSON.stringify(['delivery', 'ack', 'github'])).digest('hex'));
  });
});
