import type { ConnectorRuntime, Progress, WebhookEntity } from '@gi/domain';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createQuickJsRuntime } from './quickjs-connector.runtime';

const example = (name: string) => readFileSync(join(__dirname, '../../../examples/connectors', name), 'utf8');

const entity = (body: unknown, params = ''): WebhookEntity => ({ RequestParams: params, RequestHeaders: '', RequestBody: body, ResponseBody: null });

describe('example connectors', () => {
  let runtime: ConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime();
  });
  afterAll(() => runtime.close());

  const run = (name: string, body: WebhookEntity | null, onProgress?: (p: Progress) => void) => {
    const code = example(name);
    expect(runtime.compile(code)).toEqual({ ok: true });
    return runtime.run({ cacheKey: `examples/${name}@1`, code, entity: body, timeoutMs: 2000, allowedHosts: [], onProgress });
  };

  it('ack.js acknowledges with Status and Message', async () => {
    expect(await run('ack.js', entity({ orderId: 'A-17' }))).toMatchObject({
      kind: 'ok',
      responseBody: { Status: 'Accepted', Message: 'order A-17' },
    });
    expect(await run('ack.js', null)).toMatchObject({ kind: 'raised', title: 'Missing entity' });
  });

  it('transform.js reshapes the order', async () => {
    const body = { orderId: 9, customer: { name: 'Ada' }, items: [{ sku: 'a', qty: 2, price: 1.25 }, { sku: 'b', qty: 1, price: 10 }] };
    const result = await run('transform.js', entity(body, 'source=crm&x=1'));
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: {
        orderId: 9,
        customer: 'Ada',
        lines: [{ sku: 'a', quantity: 2, total: 2.5 }, { sku: 'b', quantity: 1, total: 10 }],
        grandTotal: 12.5,
        source: 'crm',
      },
    });
    expect(result.logs.map((l) => l.message)).toEqual(['transformed 2 lines']);
  });

  it('raise-error.js refuses a body without email', async () => {
    expect(await run('raise-error.js', entity({}))).toMatchObject({
      kind: 'raised',
      title: 'Invalid request',
      message: "The field 'email' is required.",
    });
    expect(await run('raise-error.js', entity({ email: 'a@b.c' }))).toMatchObject({
      kind: 'ok',
      responseBody: { Status: 'Accepted', Message: 'subscribed a@b.c' },
    });
  });

  it('progress.js reports progress for every recipient', async () => {
    const seen: Progress[] = [];
    const result = await run('progress.js', entity({ recipients: ['a', 'b', 'c', 'd'] }), (p) => seen.push(p));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Completed', Sent: 4 } });
    expect(seen).toEqual([
      { percent: 25, message: 'sent 1 of 4' },
      { percent: 50, message: 'sent 2 of 4' },
      { percent: 75, message: 'sent 3 of 4' },
      { percent: 100, message: 'sent 4 of 4' },
    ]);
  });
});
