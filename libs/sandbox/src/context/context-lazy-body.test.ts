import { bodyObjectMembers, LAZY_BODY_CHARS } from './lazy-request-body';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

/** An order large enough to be read lazily, spaced its own way, with non-ASCII text and escapes. */
const ORDER = {
  orderId: 42,
  customer: { id: 7, name: 'Zoë 🚀', note: 'says "hi} \\ bye', 'odd"key]': 1 },
  '2': 'an index-like key',
  lines: Array.from({ length: 80 }, (_, i) => ({ sku: `A-${i}`, qty: i % 7, price: i * 1.25, tags: ['x', '}', ']'] })),
  empty: {},
  none: null,
  flag: true,
};
const BODY = ` {\r\n  ${JSON.stringify(ORDER).slice(1, -1).replace(/,"/g, ' ,\n "')} }\n`;
// Sandboxes are made for each test's connector: slow on a busy machine.
jest.setTimeout(30_000);

const entityJson = (body: string) => `{"RequestParams":"a=1","RequestHeaders":"Content-Type=application%2Fjson","RequestBody":${body},"ResponseBody":null}`;

describe('bodyObjectMembers', () => {
  it('finds each member of an object and where its value lies', () => {
    const members = bodyObjectMembers(BODY) as Array<string | number>;
    const found: Record<string, unknown> = {};
    for (let i = 0; i < members.length; i += 3) found[members[i] as string] = JSON.parse(BODY.slice(members[i + 1] as number, members[i + 2] as number));
    expect(found).toEqual(ORDER);
    expect(Object.keys(found)).toEqual(Object.keys(JSON.parse(BODY)));
  });

  it('keeps the first place and the last value of a key given twice, as JSON.parse does', () => {
    const text = '{"a":1,"b":2,"a":3}';
    expect(bodyObjectMembers(text)).toEqual(['a', 17, 18, 'b', 11, 12]);
  });

  it('answers null for what is not one object: the text is then parsed whole', () => {
    for (const text of ['[1,2]', '"text"', '42', '{"a":1', '{"a":1} x', '{"a" 1}', '{a:1}', '{"a":1,}', '{"a":}', '{"a":"unterminated}', '']) {
      expect(bodyObjectMembers(text)).toBeNull();
    }
  });
});

describe.each([
  ['in-process', 0],
  ['on worker threads', 1],
])('a large JSON RequestBody read lazily (%s)', (_name, workers) => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers });
  });
  afterAll(() => runtime.close());

  const run = (code: string, body = BODY, limits?: { memoryBytes: number }) =>
    runtime.run({ cacheKey: `bot/lazy@${workers}`, code, entityJson: entityJson(body), rawBody: body, timeoutMs: 5000, allowedHosts: [], ...(limits ? { limits } : {}) });

  it('is read lazily at all: the body is long enough', () => {
    expect(BODY.length).toBeGreaterThanOrEqual(LAZY_BODY_CHARS);
  });

  it('gives the same value, members, order and JSON as a body parsed whole', async () => {
    const result = await run(`
      const entity = Context.GetRequestEntity();
      const body = entity.RequestBody;
      Context.SetResponseEntity({ ResponseBody: {
        id: body.orderId,
        name: body.customer.name,
        keys: Object.keys(body),
        entityKeys: Object.keys(entity),
        json: JSON.stringify(entity),
        same: entity.RequestBody === body && Context.GetRequestEntity() === entity,
        spread: { ...body }.lines.length,
        clone: structuredClone(Context.GetRequestEntity()).RequestBody.customer.name,
        inOperator: 'flag' in body && !('missing' in body),
      } });`);
    expect(result).toMatchObject({
      kind: 'ok',
      responseBody: {
        id: 42,
        name: 'Zoë 🚀',
        keys: Object.keys(ORDER),
        entityKeys: ['RequestParams', 'RequestHeaders', 'RequestBody', 'ResponseBody'],
        json: JSON.stringify(JSON.parse(entityJson(BODY))),
        same: true,
        spread: 80,
        clone: 'Zoë 🚀',
        inOperator: true,
      },
    });
  });

  it('lets a connector change, add, delete, freeze and replace what it read (or did not read)', async () => {
    const result = await run(`
      const entity = Context.GetRequestEntity();
      const body = entity.RequestBody;
      body.orderId = 43;
      body.customer.id += 1;
      body.added = 'new';
      delete body.none;
      body.lines = body.lines.slice(0, 1);
      const frozen = Object.freeze(Context.GetRequestEntity().RequestBody);
      frozen.flag = false;
      const descriptor = Object.getOwnPropertyDescriptor(frozen, 'orderId');
      entity.ResponseBody = { body, flag: frozen.flag, writable: descriptor.writable, frozen: Object.isFrozen(frozen) };
      Context.SetResponseEntity(entity);`);
    const { none: _deleted, ...kept } = ORDER;
    expect(result).toMatchObject({ kind: 'ok', responseBody: { flag: true, writable: false, frozen: true } });
    const { body } = (result as { responseBody: { body: object } }).responseBody;
    expect(body).toEqual({ ...kept, orderId: 43, customer: { ...ORDER.customer, id: 8 }, lines: ORDER.lines.slice(0, 1), added: 'new' });
    expect(Object.keys(body)).toEqual(['2', 'orderId', 'customer', 'lines', 'empty', 'flag', 'added']);
  });

  it('lets the whole RequestBody be replaced before it is read', async () => {
    const result = await run(`
      const entity = Context.GetRequestEntity();
      entity.RequestBody = { replaced: true };
      Context.SetResponseEntity({ ResponseBody: Context.GetRequestEntity().RequestBody });`);
    expect(result).toMatchObject({ kind: 'ok', responseBody: { replaced: true } });
  });

  it('is not fooled by a connector that replaced JSON.parse, String.prototype.slice or Object.prototype.get and .value first', async () => {
    const result = await run(`
      JSON.parse = () => ({ forged: true });
      String.prototype.slice = () => '"forged"';
      Object.defineProperty(Object.prototype, 'value', { value: 'forged', configurable: true });
      Object.defineProperty(Object.prototype, 'get', { value: () => 'forged', configurable: true });
      const body = Context.GetRequestEntity().RequestBody;
      const read = [body.orderId, body.customer.name];
      delete Object.prototype.get;
      delete Object.prototype.value;
      // Read once, a member is a plain data property.
      const plain = Object.getOwnPropertyDescriptor(body, 'orderId');
      Context.SetResponseEntity({ ResponseBody: [...read, 'value' in plain && !('get' in plain)] });`);
    expect(result).toMatchObject({ kind: 'ok', responseBody: [42, 'Zoë 🚀', true] });
  });

  it('throws a SyntaxError the connector can catch when a member it reads is not valid JSON, and serves the others', async () => {
    const broken = BODY.replace('"flag":true', '"flag":tru');
    const result = await run(
      `const body = Context.GetRequestEntity().RequestBody;
      let error = null;
      try { body.flag; } catch (e) { error = e.name; }
      Context.SetResponseEntity({ ResponseBody: { error, id: body.orderId } });`,
      broken,
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: { error: 'SyntaxError', id: 42 } });
  });

  it('fails GetRequestEntity as before when the body is not a JSON object at all', async () => {
    const broken = `{"orderId": 1, ${'"x":1,'.repeat(800)} oops}`;
    const result = await run(`const body = Context.GetRequestEntity().RequestBody; Context.SetResponseEntity({ ResponseBody: body });`, broken);
    expect(result).toMatchObject({ kind: 'failed', message: expect.stringContaining('SyntaxError') });
  });

  it('reads a large array body whole, the same as before', async () => {
    const array = JSON.stringify(ORDER.lines);
    expect(array.length).toBeGreaterThanOrEqual(LAZY_BODY_CHARS);
    const result = await run(`const body = Context.GetRequestEntity().RequestBody; Context.SetResponseEntity({ ResponseBody: [Array.isArray(body), body.length, body[3].sku] });`, array);
    expect(result).toMatchObject({ kind: 'ok', responseBody: [true, 80, 'A-3'] });
  });

  it('still holds the run to its memory limit when the body is read', async () => {
    const huge = JSON.stringify({ lines: Array.from({ length: 60_000 }, (_, i) => ({ sku: `A-${i}`, description: 'some words to fill the line with' })) });
    const code = `const body = Context.GetRequestEntity().RequestBody; Context.SetResponseEntity({ ResponseBody: body.lines.length });`;
    expect(await run(code, huge, { memoryBytes: 4 * 1024 * 1024 })).toMatchObject({ kind: 'failed', reason: 'limit', message: expect.stringMatching(/memory limit of 4 MiB/) });
    expect(await run(code, huge, { memoryBytes: 64 * 1024 * 1024 })).toMatchObject({ kind: 'ok', responseBody: 60_000 });
  });
});
