import { createHmac } from 'node:crypto';
import { newSigningSecret, signatureOf, webhookHeaders } from './webhook-signature';

describe('webhook signatures', () => {
  it('makes secrets of 32 random bytes in the whsec_ format', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });

  it('signs "id.timestamp.body" with the secret\'s bytes', () => {
    // The example of the Standard Webhooks specification.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    expect(signatureOf(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    expect(signatureOf(secret, 'a', 1, 'b')).toBe(`v1,${createHmac('sha256', key).update('a.1.b').digest('base64')}`);
  });

  it('carries one signature per secret while a rotation overlaps', () => {
    const headers = webhookHeaders(['whsec_bmV3', 'whsec_b2xk'], 'inv-1', 1700000000, '{}');
    expect(headers['webhook-id']).toBe('inv-1');
    expect(headers['webhook-timestamp']).toBe('1700000000');
    expect(headers['webhook-signature'].split(' ')).toEqual([signatureOf('whsec_bmV3', 'inv-1', 1700000000, '{}'), signatureOf('whsec_b2xk', 'inv-1', 1700000000, '{}')]);
  });
});
