import { GiError } from '@gi/domain';
import type { IntegrationTarget, PlatformVersion } from '@gi/domain';
import { acceptCall } from './accept-call';
import type { GatewayDeps } from './gateway.deps';
import { InboundCheck } from './inbound-access';
import type { WebhookCall } from './webhook-call';

const NOW = 1_700_000_000_000;
const integration: IntegrationTarget = { integrationId: 'ack', version: 3, entityName: 'Order', pool: 'reports', callbackUrl: 'https://example.com/done' };

/** acceptCall's deps with a catalog of `integration` (looked up only when the call did not resolve it), and the waits taken and given back. */
function deps(options: { platformVersion?: PlatformVersion; blocked?: boolean } = {}) {
  const waits: string[] = [];
  const lookups: string[] = [];
  const value = {
    bus: { isBlocked: () => options.blocked ?? false },
    store: {
      catalog: {
        resolveIntegration: async (botId: string, integrationId: string) => (lookups.push(`${botId}/${integrationId}`), integrationId === 'ack' ? integration : null),
      },
    },
    clock: { now: () => NOW },
    waits: {
      take: (botId: string) => {
        waits.push(`take ${botId}`);
        return () => void waits.push(`end ${botId}`);
      },
    },
    settings: { platformVersion: options.platformVersion ?? [9, 19], maxJsonDepth: 64, invocationTtlMs: 3_600_000, idempotencyKeyTtlMs: 86_400_000 },
  } as unknown as GatewayDeps;
  return { deps: value, waits, lookups };
}

const call = (overrides: Partial<WebhookCall> = {}): WebhookCall => ({
  botId: 'acme',
  tokenId: 'tok-1',
  entityName: 'Order',
  integrationId: 'ack',
  endpoint: 'GenericIntegration',
  rawQuery: 'source=crm',
  rawHeaders: ['Content-Type', 'application/json', 'X-Trace', 't-1'],
  contentType: 'application/json',
  callbackHeader: undefined,
  idempotencyKey: null,
  prefer: { respondAsync: false },
  prepareBody: () => async () => '{}',
  ...overrides,
});

const refusal = (accepting: Promise<unknown>) => accepting.then(() => null, (error: unknown) => error as GiError);

describe('acceptCall', () => {
  it('builds the invocation of a sync call: the entity, the integration version and pool, the expiry, the raw body', async () => {
    const { deps: d, waits } = deps();
    const accepted = await acceptCall(d, call(), async () => '\uFEFF{"orderId": 7}');
    const { invocation } = accepted;
    expect(invocation).toMatchObject({
      botId: 'acme',
      tokenId: 'tok-1',
      entityName: 'Order',
      integrationId: 'ack',
      integrationVersion: 3,
      pool: 'reports',
      mode: 'sync',
      endpoint: 'GenericIntegration',
      responseContentType: 'application/json',
      rawBody: '\uFEFF{"orderId": 7}',
      inbound: null,
      createdAt: NOW,
      expireAt: NOW + 3_600_000,
      callbackUrl: 'https://example.com/done',
    });
    expect(JSON.parse(invocation.entityJson)).toEqual({ RequestParams: 'source=crm', RequestHeaders: 'Content-Type=application%2Fjson&X-Trace=t-1', RequestBody: { orderId: 7 }, ResponseBody: null });
    expect([accepted.mode, accepted.record, accepted.hasFiles]).toEqual(['sync', null, false]);
    // A sync call holds one of its bot's waits until the caller ends it.
    expect(waits).toEqual(['take acme']);
    accepted.endWait?.();
    expect(waits).toEqual(['take acme', 'end acme']);
  });

  it('runs a call async for asyncResponse=true, or Prefer: respond-async without a wait; neither takes a wait', async () => {
    const { deps: d, waits } = deps();
    expect((await acceptCall(d, call({ rawQuery: 'asyncResponse=TRUE' }), async () => '{}')).mode).toBe('async');
    expect((await acceptCall(d, call({ prefer: { respondAsync: true } }), async () => '{}')).mode).toBe('async');
    expect((await acceptCall(d, call({ prefer: { respondAsync: true, waitSeconds: 5 } }), async () => '{}')).mode).toBe('sync');
    expect(waits).toEqual(['take acme']);
  });

  it('refuses async mode below platform version 9.10, and answers text below 9.17 unless asked', async () => {
    const old = deps({ platformVersion: [9, 9] });
    const refused = await refusal(acceptCall(old.deps, call({ rawQuery: 'asyncResponse=true' }), async () => '{}'));
    expect([refused?.code, refused?.detail]).toEqual(['bad_request', 'Asynchronous mode (asyncResponse=true) needs platform version 9.10 or later.']);
    expect((await acceptCall(old.deps, call(), async () => '{}')).invocation.responseContentType).toBe('text/plain');
    expect((await acceptCall(old.deps, call({ rawQuery: 'responseContentType=application/xml' }), async () => '{}')).invocation.responseContentType).toBe('application/xml');
  });

  it('refuses new work while the broker is blocked, before reading the body or taking a wait', async () => {
    const { deps: d, waits } = deps({ blocked: true });
    const read = jest.fn(async () => '{}');
    const refused = await refusal(acceptCall(d, call(), read));
    expect([refused?.code, refused?.detail, refused?.headers]).toEqual([
      'unavailable',
      'The message broker is refusing new work (resource alarm); nothing was accepted. Try again.',
      { 'Retry-After': '10' },
    ]);
    expect([read.mock.calls, waits]).toEqual([[], []]);
  });

  it('answers 404 naming the integration, entity and bot when the integration is unknown or on another entity, and gives the wait back', async () => {
    const { deps: d, waits, lookups } = deps();
    const unknown = await refusal(acceptCall(d, call({ integrationId: 'nope' }), async () => '{}'));
    expect([unknown?.code, unknown?.detail]).toEqual(['not_found', "No integration 'nope' is defined on entity 'Order' of bot 'acme'."]);
    const elsewhere = await refusal(acceptCall(d, call({ entityName: 'Invoice' }), async () => '{}'));
    expect(elsewhere?.detail).toBe("No integration 'ack' is defined on entity 'Invoice' of bot 'acme'.");
    const resolved = await refusal(acceptCall(d, call({ integration: null }), async () => '{}'));
    expect(resolved?.code).toBe('not_found');
    // The integration the access check resolved is not looked up again.
    expect(lookups).toEqual(['acme/nope', 'acme/ack']);
    expect(waits).toEqual(['take acme', 'end acme', 'take acme', 'end acme', 'take acme', 'end acme']);
  });

  it("records an Idempotency-Key with the call's fingerprint, living no longer than its invocation", async () => {
    const { deps: d } = deps();
    const { invocation, record } = await acceptCall(d, call({ idempotencyKey: 'k-1' }), async () => '{"a":1}');
    expect(record).toEqual({ botId: 'acme', key: 'k-1', fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/), invocationId: invocation.id, createdAt: NOW, expireAt: NOW + 3_600_000 });
    const other = await acceptCall(d, call({ idempotencyKey: 'k-1' }), async () => '{"a":2}');
    expect(other.record?.fingerprint).not.toBe(record?.fingerprint);
    const shortKeys = { ...d, settings: { ...d.settings, idempotencyKeyTtlMs: 60_000 } };
    expect((await acceptCall(shortKeys, call({ idempotencyKey: 'k-1' }), async () => '{"a":1}')).record?.expireAt).toBe(NOW + 60_000);
  });

  it("keys a verified producer's delivery by its delivery id, unless the caller sent its own Idempotency-Key", async () => {
    const { deps: d } = deps();
    const inbound = new InboundCheck(() => ({ scheme: 'github', deliveryId: 'd-1' }), false);
    const { invocation, record } = await acceptCall(d, call({ tokenId: null, inbound }), async () => '{}');
    expect(invocation.inbound).toEqual({ scheme: 'github', deliveryId: 'd-1' });
    expect(record?.key).toMatch(/^delivery:/);
    expect((await acceptCall(d, call({ tokenId: null, inbound, idempotencyKey: 'mine' }), async () => '{}')).record?.key).toBe('mine');
    const withoutId = new InboundCheck(() => ({ scheme: 'github', deliveryId: null }), false);
    expect((await acceptCall(d, call({ tokenId: null, inbound: withoutId }), async () => '{}')).record).toBeNull();
  });

  it('builds RequestBody and RequestFiles of an upload, with no raw body', async () => {
    const { deps: d } = deps();
    const files = [{ Id: 'f-1', FileName: 'a.txt', ContentType: 'text/plain', Size: 1, Sha256: 'x', PartName: 'doc' }];
    const accepted = await acceptCall(d, call({ endpoint: 'GenericIntegrationFileTransfer', contentType: 'multipart/form-data; boundary=b' }), async () => ({ body: { note: 'hi' }, files }));
    expect(JSON.parse(accepted.invocation.entityJson)).toMatchObject({ RequestBody: { note: 'hi' }, RequestFiles: files });
    expect([accepted.hasFiles, accepted.invocation.rawBody]).toEqual([true, null]);
  });
});
