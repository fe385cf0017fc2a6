import type { ByteRange, ConnectorFileReader, WebhookEntity } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

const FILE = Buffer.from('héllo, files! 0123456789abcdefghijklmnopqrstuvwxyz');
const entity: WebhookEntity = { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null };

/** A reader over one file, recording the ranges asked for. */
function reader(ranges: ByteRange[] = []): ConnectorFileReader {
  return async (id, range) => {
    ranges.push(range);
    if (id !== 'f1') throw new Error(`No file with Id '${id}' was uploaded with this request.`);
    return new Uint8Array(FILE.subarray(range.offset, range.offset + range.length));
  };
}

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('Context.ReadFile (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers, maxReadFileBytes: 64 });
  });
  afterAll(() => runtime.close());

  const run = (code: string, readFile: ConnectorFileReader | undefined = reader()) =>
    runtime.run({ cacheKey: 'bot/files@1', code, entity, timeoutMs: 2000, allowedHosts: [], readFile });

  it('reads a whole file as UTF-8 text by default, and as base64', async () => {
    const result = await run(`
      const text = await Context.ReadFile('f1');
      const b64 = await Context.ReadFile('f1', { encoding: 'base64' });
      Context.SetResponseEntity({ ResponseBody: { text, b64 } });`);
    expect(result).toMatchObject({ kind: 'ok', responseBody: { text: FILE.toString('utf8'), b64: FILE.toString('base64') } });
  });

  it('reads a range as an ArrayBuffer', async () => {
    const ranges: ByteRange[] = [];
    const result = await run(
      `const bytes = new Uint8Array(await Context.ReadFile('f1', { offset: 1, length: 2, encoding: 'bytes' }));
       Context.SetResponseEntity({ ResponseBody: Array.from(bytes) });`,
      reader(ranges),
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: [...FILE.subarray(1, 3)] });
    expect(ranges).toEqual([{ offset: 1, length: 2 }]);
  });

  it('refuses more than the per-call cap, and reads a large file in ranges', async () => {
    const big = Buffer.alloc(200, 'x');
    const bigReader: ConnectorFileReader = async (_id, range) => new Uint8Array(big.subarray(range.offset, range.offset + range.length));
    const whole = await run(`await Context.ReadFile('f1');`, bigReader);
    expect(whole).toMatchObject({ kind: 'failed', message: expect.stringMatching(/larger than 64 bytes from offset 0: read it in parts/) });
    const tooLong = await run(`await Context.ReadFile('f1', { length: 65 });`, bigReader);
    expect(tooLong).toMatchObject({ kind: 'failed', message: expect.stringMatching(/at most 64 bytes per call/) });
    const ranged = await run(
      `let total = 0;
       for (let offset = 0; ; offset += 64) {
         const part = await Context.ReadFile('f1', { offset, length: 64 });
         if (part.length === 0) break;
         total += part.length;
       }
       Context.SetResponseEntity({ ResponseBody: total });`,
      bigReader,
    );
    expect(ranged).toMatchObject({ kind: 'ok', responseBody: 200 });
  });

  it('rejects with the reader\'s message, and when the request has no files', async () => {
    const code = `try { await Context.ReadFile('other'); } catch (e) { Context.SetResponseEntity({ ResponseBody: e.message }); }`;
    expect(await run(code)).toMatchObject({ kind: 'ok', responseBody: "No file with Id 'other' was uploaded with this request." });
    expect(await run(code, undefined)).toMatchObject({ kind: 'ok', responseBody: "No file with Id 'other' was uploaded with this request." });
  });

  it.each([
    ['no id', `Context.ReadFile()`, /expects the Id of a file/],
    ['a negative offset', `Context.ReadFile('f1', { offset: -1 })`, /offset must be a whole number/],
    ['a fractional length', `Context.ReadFile('f1', { length: 1.5 })`, /length must be a whole number/],
    ['an unknown encoding', `Context.ReadFile('f1', { encoding: 'hex' })`, /encoding must be 'utf8', 'base64' or 'bytes'/],
    ['options that are not an object', `Context.ReadFile('f1', 5)`, /options must be an object/],
  ])('refuses %s', async (_case, call, message) => {
    const result = await run(`try { await ${call}; } catch (e) { Context.SetResponseEntity({ ResponseBody: e.message }); }`);
    expect(result).toMatchObject({ kind: 'ok', responseBody: expect.stringMatching(message) });
  });
});
