import { EgressRefused, resolveDestination, type ResolveHost } from './destination';
import { isLoopbackAddress } from './egress-policy';

/** Decisions on address strings and a stand-in resolver; nothing here opens a connection. */
const answering =
  (...addresses: string[]): ResolveHost =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const noDns: ResolveHost = async (host) => {
  throw new Error(`DNS asked for ${host}`);
};

async function refusal(hostname: string, loopback: boolean, resolve: ResolveHost = noDns): Promise<EgressRefused | 'allowed'> {
  try {
    await resolveDestination(hostname, { addresses: [], loopback }, resolve);
    return 'allowed';
  } catch (error) {
    if (error instanceof EgressRefused) return error;
    throw error;
  }
}

describe('loopback addresses', () => {
  it.each(['127.0.0.1', '127.1.2.3', '127.255.255.255', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:1'])('%j is loopback', (address) => {
    expect(isLoopbackAddress(address)).toBe(true);
  });

  it.each(['0.0.0.0', '::', '10.0.0.1', '169.254.169.254', '::127.0.0.1', '64:ff9b::7f00:1', '::2', '128.0.0.1', 'localhost', '127.1', 'fe80::1%lo'])(
    '%j is not',
    (address) => {
      expect(isLoopbackAddress(address)).toBe(false);
    },
  );
});

describe('resolveDestination trusting loopback', () => {
  it.each(['127.0.0.1', '127.0.0.53', '::1'])('allows the literal %j only when loopback is trusted', async (address) => {
    expect(await refusal(address, true)).toBe('allowed');
    const refused = await refusal(address, false);
    expect(refused).toBeInstanceOf(EgressRefused);
    expect((refused as EgressRefused).loopback).toBe(true);
  });

  it.each(['10.0.0.1', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.100.100.200', '0.0.0.0', '::', 'fd00:ec2::254', 'fe80::1', '::ffff:10.0.0.1', '64:ff9b::7f00:1'])(
    'still refuses the private address %j, and says trusting loopback would not help',
    async (address) => {
      const refused = await refusal(address, true);
      expect(refused).toBeInstanceOf(EgressRefused);
      expect((refused as EgressRefused).loopback).toBe(false);
      expect((await refusal(address, false)) as EgressRefused).toHaveProperty('loopback', false);
    },
  );

  it('allows a name that resolves to loopback only, and refuses one that also resolves to a private address', async () => {
    expect(await refusal('localhost', true, answering('::1', '127.0.0.1'))).toBe('allowed');
    expect(await refusal('localhost', false, answering('::1', '127.0.0.1'))).toHaveProperty('loopback', true);
    expect(await refusal('mixed.example.test', true, answering('127.0.0.1', '10.0.0.1'))).toHaveProperty('loopback', false);
    expect(await refusal('mixed.example.test', false, answering('127.0.0.1', '10.0.0.1'))).toHaveProperty('loopback', false);
  });
});
