import type { ConnectorRunRequest, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

const entity: WebhookEntity = { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null };

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Context.InboundAuth (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) => runtime.run({ cacheKey: `bot/inbound@${code.length}`, code, entity, timeoutMs: 5000, allowedHosts: [], ...extra });
  const READ = `
    const a = Context.InboundAuth;
    try { a.scheme = 'forged'; } catch {}
    Context.SetResponseEntity({ ResponseBody: { ...a, same: a === Context.InboundAuth, frozen: Object.isFrozen(a) } });`;

  it('tells the connector which scheme verified the call and the delivery id, in a frozen object', async () => {
    const result = await run(READ, { inbound: { scheme: 'github', deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958' } });
    expect(result).toMatchObject({ kind: 'ok', responseBody: { scheme: 'github', deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958', same: true, frozen: true } });
  });

  it('says bearer, with no delivery id, for a call made with a bot token; nothing of a run is left to the next', async () => {
    await run(READ, { inbound: { scheme: 'stripe', deliveryId: 'evt_1' } });
    expect(await run(READ, { inbound: null })).toMatchObject({ kind: 'ok', responseBody: { scheme: 'bearer', deliveryId: null } });
    expect(await run(READ)).toMatchObject({ kind: 'ok', responseBody: { scheme: 'bearer', deliveryId: null } });
  });
});
