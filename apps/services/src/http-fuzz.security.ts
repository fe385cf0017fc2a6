import fc from 'fast-check';
import type { InProcessReply } from '@gi/http';
import { ADMIN_TOKEN, ServicesFixture } from './services.fixture';

/**
 * Property-based fuzzing through the routes themselves: the embedded service (gateway, results and
 * control over SQLite) called in-process with arbitrary bodies of every kind, headers, Prefer,
 * Idempotency-Key and Callback-Url values, query strings, multipart uploads and polls. Whatever a
 * caller sends: never a 5xx, only the statuses the contract names, and what is accepted is stored as sent.
 */

const fixture = new ServicesFixture({ MAX_BODY_SIZE: '64kb' });
let token: string;
let signedToken: string;
const WEBHOOK = '/api/Platform/acme/Order/ack/GenericIntegration';
const service = () => fixture.service('embedded');

beforeAll(async () => {
  await fixture.start();
  ({ token } = await fixture.setUpBot('acme'));
  // A bot with a signing secret: its calls may carry a Callback-Url.
  ({ token: signedToken } = await fixture.setUpBot('signed'));
  await fixture.admin('POST', '/bots/signed/callback-secret');
});
afterAll(() => fixture.close());

const RUNS = { numRuns: 150 };
/** Statuses a webhook start may answer with (nothing runs connectors here, so no outcome errors). */
const START_STATUSES = [202, 400, 409, 413, 415, 422];

async function start(init: { query?: string; headers?: Record<string, string>; body?: string | Buffer; bearer?: string; path?: string }): Promise<InProcessReply> {
  return service().call({
    method: 'POST',
    path: `${init.path ?? WEBHOOK}?asyncResponse=true${init.query ? `&${init.query}` : ''}`,
    headers: { authorization: `Bearer ${init.bearer ?? token}`, ...init.headers },
    body: init.body,
  });
}

async function storedEntity(reply: InProcessReply, botId = 'acme'): Promise<Record<string, unknown>> {
  const id = (JSON.parse(reply.body) as { invocationId: string }).invocationId;
  return (await fixture.admin('GET', `/bots/${botId}/invocations/${id}`)).json.entity as Record<string, unknown>;
}

/** Fails the property with the reply itself when its status is not one of `allowed`. */
function expectStatus(reply: InProcessReply, allowed: number[]): void {
  if (!allowed.includes(reply.status)) throw new Error(`answered ${reply.status}, not one of ${allowed.join(', ')}: ${reply.body.slice(0, 200)}`);
}

const contentType = fc.oneof(
  fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'application/problem+json', 'text/plain', 'text/xml', 'application/xml', 'application/x-www-form-urlencoded', 'application/octet-stream', 'image/png', 'multipart/form-data', 'text/csv;charset="UTF-8"'),
  fc.stringMatching(/^[a-z]{1,8}\/[a-z+.-]{1,10}(; ?[a-z]{1,6}=[a-z0-9-]{0,8})?$/),
);

describe('bodies of every kind', () => {
  it('answers any bytes under any content type with 202, 400, 413 or 415; accepted JSON and text are stored as sent', async () => {
    const body = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)), fc.json({ maxDepth: 4 }).map((text) => Buffer.from(text)), fc.string({ unit: 'binary', maxLength: 200 }).map((text) => Buffer.from(text)));
    await fc.assert(
      fc.asyncProperty(contentType, body, async (type, bytes) => {
        const reply = await start({ headers: { 'content-type': type }, body: bytes });
        expectStatus(reply, [202, 400, 413, 415]);
        if (reply.status !== 202) return;
        const stored = (await storedEntity(reply)).RequestBody;
        const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
        const media = type.split(';')[0].trim();
        if (text === '') expect(stored).toBeNull();
        else if (media.endsWith('json')) expect(stored).toEqual(JSON.parse(text));
        else if (media !== 'application/x-www-form-urlencoded') expect(stored).toBe(text);
      }),
      RUNS,
    );
  });

  it('stores every JSON value within the depth limit exactly (a forbidden key is a 400)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 6 }), async (value) => {
        const text = JSON.stringify(value);
        const reply = await start({ headers: { 'content-type': 'application/json' }, body: text });
        if (/"(__proto__|constructor)"/.test(text) && reply.status === 400) return;
        expect(reply.status).toBe(202);
        expect((await storedEntity(reply)).RequestBody).toEqual(JSON.parse(text));
      }),
      RUNS,
    );
  });
});

describe('headers', () => {
  const headerName = fc.stringMatching(/^x-[a-z0-9-]{1,12}$/);
  // Printable ASCII (Node's client sends other characters as UTF-8; raw octets are a hostile-input case); the parser trims the ends.
  const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }).map((v) => v.trim());

  it('stores any headers in RequestHeaders, in order, each decoding to what was sent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.tuple(headerName, headerValue), { selector: ([name]) => name, maxLength: 10 }), async (headers) => {
        const reply = await start({ headers: { 'content-type': 'application/json', ...Object.fromEntries(headers) }, body: '{}' });
        expect(reply.status).toBe(202);
        const stored = String((await storedEntity(reply)).RequestHeaders)
          .split('&')
          .map((pair) => pair.split('=').map(decodeURIComponent))
          .filter(([name]) => name.startsWith('x-'));
        expect(stored).toEqual(headers);
        expect(String((await storedEntity(reply)).RequestHeaders)).not.toMatch(/authorization/i);
      }),
      RUNS,
    );
  });

  it('answers any Prefer, Idempotency-Key and Callback-Url with a start or a 4xx', async () => {
    const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });
    const prefer = fc.oneof(printable, fc.constantFrom('respond-async', 'wait=0', 'respond-async, wait=1', 'wait="x,y"', '"\\"\\"'));
    const key = fc.oneof(printable, printable.map((k) => `"${k}"`), fc.constant(''));
    const callback = fc.oneof(printable, fc.webUrl(), fc.constantFrom('http://127.0.0.1:9/x', 'https://user:pw@example.com/', 'ftp://example.com/'));
    await fc.assert(
      fc.asyncProperty(fc.option(prefer), fc.option(key), fc.option(callback), fc.boolean(), async (preferValue, keyValue, callbackValue, signed) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (preferValue !== null) headers.prefer = preferValue;
        if (keyValue !== null) headers['idempotency-key'] = keyValue;
        if (callbackValue !== null) headers['callback-url'] = callbackValue;
        const reply = await start({ headers, body: '{"n":1}', bearer: signed ? signedToken : token, path: signed ? '/api/Platform/signed/Order/ack/GenericIntegration' : WEBHOOK });
        expectStatus(reply, START_STATUSES);
      }),
      RUNS,
    );
  });
});

describe('queries', () => {
  const pair = fc.oneof(
    fc.constantFrom('asyncResponse=true', 'asyncResponse=TRUE', 'asyncResponse=no', 'responseContentType=text%2Fplain', 'responseContentType=%%', 'responseContentType=', '%', '=', 'a=%E0%A4%A', 'x=1&x=2'),
    fc.stringMatching(/^[A-Za-z0-9%._~=+!$'()*,;:@/?-]{0,12}$/),
  );

  it('answers any query with a start or a 400; RequestParams is the query as sent minus the control parameters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { maxLength: 6 }), async (pairs) => {
        const query = pairs.join('&');
        const reply = await start({ query, headers: { 'content-type': 'application/json' }, body: '{}' });
        expectStatus(reply, [202, 400]);
        if (reply.status !== 202) return;
        const control = /^(asyncResponse|responseContentType)(=|$)/;
        expect((await storedEntity(reply)).RequestParams).toBe(query.split('&').filter((p) => p !== '' && !control.test(p)).join('&'));
      }),
      RUNS,
    );
  });

  it('answers any poll query with a result, a pending reply or a 4xx', async () => {
    const started = await start({ headers: { 'content-type': 'application/json' }, body: '{}' });
    const id = (JSON.parse(started.body) as { invocationId: string }).invocationId;
    const pollPair = fc.oneof(pair, fc.constantFrom(`invocationId=${id}`, 'invocationId=nope', 'waitSeconds=0', 'waitSeconds=61', 'waitSeconds=00', 'responseContentType=application%2Fxml'));
    await fc.assert(
      fc.asyncProperty(fc.array(pollPair, { maxLength: 5 }), fc.constantFrom('GET', 'DELETE'), async (pairs, method) => {
        // A poll that would hold is cut short: nothing runs connectors here.
        const query = [...pairs.filter((p) => !p.startsWith('waitSeconds')), 'waitSeconds=0'].join('&');
        const reply = await service().call({ method, path: `/api/Platform/acme/GetGenericIntegrationResponse?${query}`, headers: { authorization: `Bearer ${token}` } });
        expectStatus(reply, [200, 202, 400, 404, 409, 410]);
        expect(reply.headers['cache-control']).toBe('no-store');
      }),
      RUNS,
    );
  });
});

describe('multipart uploads', () => {
  const BOUNDARY = 'fuzz-b0undary';
  const partName = fc.stringMatching(/^[a-zA-Z0-9_]{0,8}$/);
  const part = fc.oneof(
    fc.record({ name: partName, value: fc.string({ maxLength: 100 }), type: fc.constantFrom('text/plain', 'application/json', 'application/octet-stream'), file: fc.option(fc.stringMatching(/^[a-z./\\]{0,12}$/)) }),
    fc.constant(null),
  );
  const render = (parts: Array<{ name: string; value: string; type: string; file: string | null } | null>) =>
    parts
      .map((p) => (p === null ? `--${BOUNDARY}\r\nbroken header\r\n\r\nx\r\n` : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"${p.file === null ? '' : `; filename="${p.file}"`}\r\nContent-Type: ${p.type}\r\n\r\n${p.value}\r\n`))
      .join('') + `--${BOUNDARY}--\r\n`;

  it('answers any upload, mangled or not, with a start or a 4xx, and keeps no file of a refused one', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 5 }), fc.option(fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 8 }))), async (parts, mangle) => {
        let body = Buffer.from(render(parts));
        if (mangle) {
          const at = mangle[0] % (body.length + 1);
          body = Buffer.concat([body.subarray(0, at), Buffer.from(mangle[1]), body.subarray(at)]);
        }
        const reply = await start({ path: '/api/Platform/acme/Order/ack/GenericIntegrationFileTransfer', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body });
        expectStatus(reply, [202, 400, 413, 415]);
      }),
      RUNS,
    );
  });
});

describe('control API bodies', () => {
  it('answers any JSON body on every admin route that takes one with a 2xx or a 4xx', async () => {
    const routes = service()
      .routes.filter((route) => route.caller === 'admin' && (route.method === 'PUT' || route.method === 'POST'))
      .map((route) => route.path.replace(':botId', 'acme').replace(':entityName', 'Fuzzed').replace(':integrationId', 'fuzzed').replace(':tokenId', 'no-such-token'));
    expect(routes.length).toBeGreaterThan(5);
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
      fc.record({ entityName: fc.constantFrom('Order', 'x', ''), code: fc.string({ maxLength: 40 }), timeoutSeconds: fc.jsonValue(), limits: fc.jsonValue(), allowedHosts: fc.jsonValue(), fields: fc.jsonValue(), ttlSeconds: fc.jsonValue(), label: fc.jsonValue(), ratePerSecond: fc.jsonValue(), burst: fc.jsonValue(), maxInFlight: fc.jsonValue() }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
      fc.string({ unit: 'binary', maxLength: 80 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), body, async (path, text) => {
        const method = path.endsWith('/tokens') || path.endsWith('/callback-secret') ? 'POST' : 'PUT';
        const reply = await service().call({ method, path, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: text });
        expectStatus(reply, [200, 201, 400, 404, 413, 415]);
      }),
      RUNS,
    );
  });
});
