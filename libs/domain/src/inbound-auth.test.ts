import { acceptableDeliveryId, BEARER_AUTH, inboundAuthOf, inboundSecretNames } from './inbound-auth';

describe('inbound auth', () => {
  it('is a bot token for an integration deployed without one', () => {
    expect(inboundAuthOf({})).toEqual({ scheme: 'bearer' });
    expect(inboundAuthOf({})).toBe(BEARER_AUTH);
    const github = { scheme: 'github' as const, secret: 'GH' };
    expect(inboundAuthOf({ inboundAuth: github })).toBe(github);
  });

  it('reads its secret, then the previous one during a rotation, and none for a bot token', () => {
    // Strictly: toEqual would take a stray undefined name for no name.
    expect(inboundSecretNames({ scheme: 'bearer' })).toStrictEqual([]);
    expect(inboundSecretNames({ scheme: 'github', secret: 'GH' })).toStrictEqual(['GH']);
    expect(inboundSecretNames({ scheme: 'basic', secret: 'NEW', previousSecret: 'OLD' })).toEqual(['NEW', 'OLD']);
    // An empty name is still a name: only an absent previous secret is none.
    expect(inboundSecretNames({ scheme: 'basic', secret: 'NEW', previousSecret: '' })).toEqual(['NEW', '']);
  });

  it('keeps a delivery id of 1 to 200 printable ASCII characters, and no other', () => {
    for (const id of ['d', '!', '~', 'b1c2-uuid', 'x'.repeat(200)]) expect(acceptableDeliveryId(id)).toBe(id);
    for (const id of ['', ' ', 'a b', 'x'.repeat(201), 'é', 'a\n', 'a\u007f', null, undefined]) expect(acceptableDeliveryId(id)).toBeNull();
    // The whole value: a good id with a bad character before or after it is refused.
    expect(acceptableDeliveryId(' abc')).toBeNull();
    expect(acceptableDeliveryId('abc ')).toBeNull();
  });
});
