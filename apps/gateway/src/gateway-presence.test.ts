import { Writable } from 'node:stream';
import type { InstanceRegistry } from '@gi/domain';
import { createLogger } from '@gi/observability';
import { FakeInstanceRegistry } from '@gi/testing';
import { GatewayPresence, PRESENCE_INTERVAL_MS, PRESENCE_TTL_MS } from './gateway-presence';

/** A registry in memory (its calls counted), a clock on the fake timers, and the log lines written. */
function world(registry: InstanceRegistry = new FakeInstanceRegistry()) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const beats: string[] = [];
  const counted: InstanceRegistry = {
    heartbeat: (role, instanceId, now, ttlMs) => (beats.push(instanceId), registry.heartbeat(role, instanceId, now, ttlMs)),
    leave: (role, instanceId) => registry.leave(role, instanceId),
  };
  const counts: number[] = [];
  const start = (instanceId = 'g1') =>
    GatewayPresence.start({ registry: counted, instanceId, clock: { now: () => Date.now() }, logger: createLogger('info', 'test', { destination }), onCount: (peers) => counts.push(peers) });
  /** Another gateway announcing itself, as its own presence would. */
  const peer = (instanceId: string) => registry.heartbeat('gateway', instanceId, Date.now(), PRESENCE_TTL_MS);
  return { registry, lines, beats, counts, start, peer };
}

describe('GatewayPresence', () => {
  let presence: GatewayPresence | undefined;
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(async () => {
    await presence?.stop();
    presence = undefined;
    jest.useRealTimers();
  });

  it('announces itself at start and every interval, and counts the gateways heard of within the TTL', async () => {
    const w = world();
    await w.peer('g2');
    await w.registry.heartbeat('executor', 'e1', Date.now(), PRESENCE_TTL_MS);
    presence = await w.start();
    expect([w.beats, presence.peers(), w.counts]).toEqual([['g1'], 2, [2]]);
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS - 1);
    expect(w.beats).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect([w.beats, presence.peers()]).toEqual([['g1', 'g1'], 2]);
    // g2 said nothing since: it still counts at the TTL, and no more at the next beat.
    await jest.advanceTimersByTimeAsync(PRESENCE_TTL_MS - PRESENCE_INTERVAL_MS);
    expect(presence.peers()).toBe(2);
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS);
    expect([presence.peers(), w.counts]).toEqual([1, [2, 2, 2, 2, 1]]);
  });

  it('logs the count when it changes only', async () => {
    const w = world();
    presence = await w.start();
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS);
    await w.peer('g2');
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS);
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS);
    const logged = w.lines.filter((line) => line.msg === 'gateways sharing the quotas');
    expect(logged).toEqual([expect.objectContaining({ level: 30, peers: 2 })]);
    expect(w.lines).toHaveLength(1);
  });

  it('counts itself at least, whatever the registry answers', async () => {
    const w = world({ heartbeat: async () => 0, leave: async () => undefined });
    presence = await w.start();
    expect([presence.peers(), w.counts]).toEqual([1, [1]]);
  });

  it('keeps the last count while the registry fails, and logs why', async () => {
    const registry = new FakeInstanceRegistry();
    let failing = false;
    const w = world({
      heartbeat: (...args) => (failing ? Promise.reject(new Error('store unreachable')) : registry.heartbeat(...args)),
      leave: (...args) => registry.leave(...args),
    });
    await registry.heartbeat('gateway', 'g2', Date.now(), PRESENCE_TTL_MS);
    presence = await w.start();
    failing = true;
    await jest.advanceTimersByTimeAsync(PRESENCE_TTL_MS * 2);
    expect([presence.peers(), w.counts]).toEqual([2, [2]]);
    const failed = w.lines.filter((line) => line.msg === 'gateway heartbeat failed; keeping the last count');
    expect(failed).toHaveLength(6);
    expect(failed[0]).toMatchObject({ level: 40, peers: 2, err: { message: 'store unreachable' } });
  });

  it('leaves at stop, so the others count one fewer at once, and announces itself no more', async () => {
    const w = world();
    presence = await w.start();
    expect(await w.peer('g2')).toBe(2);
    await presence.stop();
    expect(await w.peer('g2')).toBe(1);
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS * 3);
    expect(w.beats).toEqual(['g1']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('stops without throwing when the registry cannot be told, and logs it', async () => {
    const w = world({ heartbeat: async () => 1, leave: async () => Promise.reject(new Error('store unreachable')) });
    presence = await w.start();
    await expect(presence.stop()).resolves.toBeUndefined();
    expect(w.lines).toEqual([expect.objectContaining({ level: 40, msg: 'could not leave the gateway registry', err: expect.objectContaining({ message: 'store unreachable' }) })]);
  });

  it('starts without a listener for the count', async () => {
    presence = await GatewayPresence.start({ registry: new FakeInstanceRegistry(), instanceId: 'g1', clock: { now: () => Date.now() }, logger: createLogger('silent', 'test') });
    await jest.advanceTimersByTimeAsync(PRESENCE_INTERVAL_MS);
    expect(presence.peers()).toBe(1);
  });
});
