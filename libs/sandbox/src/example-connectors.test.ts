import type { ConnectorRuntime, Progress, WebhookEntity } from '@gi/domain';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createQuickJsRuntime } from './quickjs-connector.runtime';

const example = (name: string) => readFileSync(join(__dirname, '../../../examples/connectors', name), 'utf8');

const entity = (body: unknown, params = ''): WebhookEntity => ({ RequestParams: params, RequestHeaders: '', RequestBody: body, ResponseBody: null });

describe('example connectors', () => {
  let runtime: ConnectorRuntime;
  beforeAll(async () => {
    // The local stand-in for the downstream API listens on 127.0.0.1, which connectors may not reach
    // unless it is trusted explicitly.
    runtime = await createQuickJsRuntime({ workers: 1, http: { trustedAddresses: ['127.0.0.1'] } });
  });
  afterAll(() => runtime.close());

  const run = (name: string, body: WebhookEntity | null, onProgress?: (p: Progress) => void, allowedHosts: string[] = []) => {
    const code = example(name);
    expect(runtime.compile(code)).toEqual({ ok: true });
    return runtime.run({ cacheKey: `examples/${name}@1`, code, entity: body, timeoutMs: 2000, allowedHosts, onProgress });
  };

  it.each(['call-api.js', 'fetch-api.js'])('%s forwards the order and replies with the reference', async (name) => {
    const received: string[] = [];
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk));
      req.on('end', () => {
        received.push(`${req.method} ${req.url} ${text}`);
        res.setHeader('Content-Type', 'application/json');
        if (JSON.parse(text).orderId === 'bad') res.statusCode = 500;
        res.end(JSON.stringify({ reference: 'R-1' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const ok = await run(name, entity({ orderId: 'A-1', apiBase }), undefined, ['127.0.0.1']);
      expect(ok).toMatchObject({ kind: 'ok', responseBody: { Status: 'Forwarded', Reference: 'R-1' } });
      expect(received).toEqual(['POST /orders {"orderId":"A-1"}']);
      const failed = await run(name, entity({ orderId: 'bad', apiBase }), undefined, ['127.0.0.1']);
      expect(failed).toMatchObject({ kind: 'raised', title: 'Downstream error' });
      const notAllowed = await run(name, entity({ orderId: 'A-1', apiBase }));
      expect(notAllowed).toMatchObject({ kind: 'failed', reason: 'threw', message: expect.stringMatching(/not in this integration's allowed hosts/) });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('files.js reports each file with the size and SHA-256 it computed from the bytes read', async () => {
    const data = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 31) & 255));
    const sha256 = createHash('sha256').update(data).digest('hex');
    const file = { Id: 'f-1', FileName: 'a.bin', ContentType: 'application/octet-stream', Size: data.length, Sha256: sha256, PartName: 'doc' };
    const code = example('files.js');
    const result = await runtime.run({
      cacheKey: 'examples/files.js@1',
      code,
      entity: { ...entity({ note: 'hi' }), RequestFiles: [file, { ...file, Id: 'f-2', Sha256: '0'.repeat(64) }] },
      timeoutMs: 5000,
      allowedHosts: [],
      readFile: async (_id, range) => new Uint8Array(data.subarray(range.offset, range.offset + range.length)),
    });
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: {
        Fields: { note: 'hi' },
        Files: [
          { PartName: 'doc', FileName: 'a.bin', Size: 3000, Sha256: sha256, Verified: true },
          { Size: 3000, Sha256: sha256, Verified: false },
        ],
      },
    });
  });

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

  it('progress.js reports progress as it goes (updates within a second coalesced, the last one kept)', async () => {
    const seen: Progress[] = [];
    const result = await run('progress.js', entity({ recipients: ['a', 'b', 'c', 'd'] }), (p) => seen.push(p));
    expect(result).toMatchObject({ kind: 'ok', responseBody: { Status: 'Completed', Sent: 4 } });
    expect(seen).toEqual([
      { percent: 25, message: 'sent 1 of 4' },
      { percent: 100, message: 'sent 4 of 4' },
    ]);
  });
});
