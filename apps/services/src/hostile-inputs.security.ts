import { sendRawInProcess } from '@gi/http';
import type { InProcessReply } from '@gi/http';
import { ADMIN_TOKEN, ServicesFixture } from './services.fixture';

/**
 * Hostile input per class, against the embedded service in-process (the server settings of `gi up`,
 * Node's HTTP parser, the routes of every service): deep JSON, headers, charsets and bytes that are
 * not UTF-8, HTTP framing, paths and queries. Every answer is a problem document with a 4xx, never a
 * 5xx; what is accepted is stored exactly as sent.
 */

// Nothing runs connectors: accepted async calls stay queued.
const fixture = new ServicesFixture();
let token: string;
const WEBHOOK = '/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true';
const service = () => fixture.service('embedded');

beforeAll(async () => {
  await fixture.start();
  ({ token } = await fixture.setUpBot('acme'));
});
afterAll(() => fixture.close());

const post = (body: string | Buffer, contentType = 'application/json', headers: Record<string, string> = {}, path = WEBHOOK) =>
  service().call({ method: 'POST', path, headers: { authorization: `Bearer ${token}`, 'content-type': contentType, ...headers }, body });

const json = (reply: InProcessReply) => JSON.parse(reply.body) as Record<string, unknown>;

/** The problem document of a refusal: status, type, and that it is one. */
function expectProblem(reply: InProcessReply, status: number, type: string): Record<string, unknown> {
  expect([reply.status, reply.headers['content-type'], json(reply).type]).toEqual([status, 'application/problem+json', `urn:gi:problem:${type}`]);
  return json(reply);
}

/** The entity an accepted async call stored. */
async function storedEntity(reply: InProcessReply): Promise<Record<string, unknown>> {
  expect(reply.status).toBe(202);
  const id = json(reply).invocationId as string;
  return (await fixture.admin('GET', `/bots/acme/invocations/${id}`)).json.entity as Record<string, unknown>;
}

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);
const nestedObject = (depth: number) => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

describe('deep JSON (MAX_JSON_DEPTH, default 64)', () => {
  it('answers the 8 KB body that used to end the process with 400, naming the limit', async () => {
    const reply = await post(nested(4000), 'application/json', {}, '/api/Platform/acme/Order/ack/GenericIntegration');
    const problem = expectProblem(reply, 400, 'bad-request');
    expect(problem).toMatchObject({ maxJsonDepth: 64, detail: expect.stringContaining('deeper than the limit of 64 levels') });
  });

  it('answers JSON nested 5,000 deep with 400, not the 503 "try again" of a failed store write', async () => {
    expectProblem(await post(nested(5000)), 400, 'bad-request');
    expectProblem(await post(nestedObject(5000)), 400, 'bad-request');
  });

  it('takes JSON exactly 64 deep and refuses 65, arrays and objects alike', async () => {
    expect((await storedEntity(await post(nested(64)))).RequestBody).toEqual(JSON.parse(nested(64)));
    expect((await storedEntity(await post(nestedObject(64)))).RequestBody).toEqual(JSON.parse(nestedObject(64)));
    expectProblem(await post(nested(65)), 400, 'bad-request');
    expectProblem(await post(nestedObject(65)), 400, 'bad-request');
  });

  it('refuses a megabyte of "[" at once, without recursion', async () => {
    const started = Date.now();
    expectProblem(await post('['.repeat(1_000_000)), 400, 'bad-request');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('counts no bracket inside a string, escaped quotes included', async () => {
    const body = JSON.stringify({ text: nested(5000), quoted: `\\"${nested(100)}` });
    expect((await storedEntity(await post(body))).RequestBody).toEqual(JSON.parse(body));
  });

  it('holds vendor +json types to the same limit', async () => {
    expectProblem(await post(nested(100), 'application/vnd.api+json'), 400, 'bad-request');
  });

  it('holds a multipart part sent as JSON to the limit; a text part is text', async () => {
    const boundary = 'b0undary';
    const part = (type: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="f"\r\nContent-Type: ${type}\r\n\r\n${value}\r\n--${boundary}--\r\n`;
    const upload = (body: string) => post(body, `multipart/form-data; boundary=${boundary}`, {}, '/api/Platform/acme/Order/ack/GenericIntegrationFileTransfer?asyncResponse=true');
    const refused = expectProblem(await upload(part('application/json', nested(65))), 400, 'bad-request');
    expect(refused.detail).toMatch(/form field 'f'.*deeper than the limit of 64/);
    expect((await storedEntity(await upload(part('text/plain', nested(5000))))).RequestBody).toEqual({ f: nested(5000) });
  });

  it('keeps form-urlencoded bodies flat: nested-looking keys are names, never nesting', async () => {
    const key = `a${'[b]'.repeat(5000)}`;
    expect((await storedEntity(await post(`${encodeURIComponent(key)}=1&x=2&x=3`, 'application/x-www-form-urlencoded'))).RequestBody).toEqual({ [key]: '1', x: ['2', '3'] });
  });

  it('holds control API bodies to the limit', async () => {
    const reply = await service().call({
      method: 'PUT',
      path: '/admin/bots/acme/entities/Deep',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: `{"fields":${nested(5000)}}`,
    });
    expectProblem(reply, 400, 'bad-request');
  });
});

describe('headers', () => {
  it('answers a header block over 16 KiB with a 431 problem document', async () => {
    const reply = await service().call({ path: '/healthz', headers: { 'x-big': 'a'.repeat(17 * 1024) } });
    expectProblem(reply, 431, 'headers-too-large');
  });

  it('stores every header of a call with 2,500 of them (1,019 were kept)', async () => {
    const headers = Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`h${i}`, '1']));
    const entity = await storedEntity(await post('{}', 'application/json', headers));
    const names = String(entity.RequestHeaders).split('&').map((pair) => pair.split('=')[0]);
    expect(names.filter((name) => /^h\d+$/.test(name))).toHaveLength(2500);
  });

  it('stores header bytes outside ASCII as sent (Latin-1 octets), never a 5xx', async () => {
    const reply = await sendRawInProcess(
      service().server,
      Buffer.concat([Buffer.from(`POST ${WEBHOOK} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-Name: `), Buffer.from([0xe9, 0xff]), Buffer.from('\r\nConnection: close\r\n\r\n{}')]),
    );
    expect(reply).toMatch(/^HTTP\/1\.1 202 /);
    const id = /"invocationId":"([^"]+)"/.exec(reply)?.[1];
    const entity = (await fixture.admin('GET', `/bots/acme/invocations/${id}`)).json.entity as Record<string, unknown>;
    expect(String(entity.RequestHeaders)).toContain(`X-Name=${encodeURIComponent('\u00e9\u00ff')}`);
  });

  it('answers control characters in a header value with a 400 problem document', async () => {
    const reply = await sendRawInProcess(service().server, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n');
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain('"type":"urn:gi:problem:bad-request"');
  });

  it('answers a 10 KB token with 401, and a repeated or over-long Idempotency-Key with 400', async () => {
    const reply = await service().call({ method: 'POST', path: WEBHOOK, headers: { authorization: `Bearer ${'a'.repeat(10_000)}` }, body: '{}' });
    expectProblem(reply, 401, 'unauthorized');
    expectProblem(await post('{}', 'application/json', { 'idempotency-key': `"${'k'.repeat(256)}"` }), 400, 'bad-request');
    const repeated = await sendRawInProcess(
      service().server,
      `POST ${WEBHOOK} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nIdempotency-Key: "a"\r\nIdempotency-Key: "b"\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    );
    expect(repeated).toMatch(/^HTTP\/1\.1 400 /);
  });

  describe('Callback-Url (a bot that can sign callbacks)', () => {
    let signedToken: string;
    beforeAll(async () => {
      ({ token: signedToken } = await fixture.setUpBot('signed'));
      await fixture.admin('POST', '/bots/signed/callback-secret');
    });
    const SIGNED = WEBHOOK.replace('/acme/', '/signed/');
    const raw = (headers: string) =>
      sendRawInProcess(service().server, `POST ${SIGNED} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${signedToken}\r\n${headers}Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);

    it('refuses the header sent twice with 400 (Node would join the two URLs into one)', async () => {
      const reply = await raw('Callback-Url: https://a.example/hook\r\ncallback-url: https://b.example/hook\r\n');
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).toContain('The Callback-Url header may be sent only once.');
      // Sent once, the same URL is taken: the refusal is about the repeat.
      expect(await raw('Callback-Url: https://a.example/hook\r\n')).toMatch(/^HTTP\/1\.1 202 /);
    });

    it.each(['https://a.example:0/hook', 'http://a.example:00/', 'http://[2001:db8::1]:0/'])('refuses port 0 (%s), which would connect to port 80 or 443, with 400', async (url) => {
      const reply = await raw(`Callback-Url: ${url}\r\n`);
      expect(reply).toMatch(/^HTTP\/1\.1 400 /);
      expect(reply).toContain('port 0 is not a port a receiver can listen on');
    });
  });
});

describe('charsets and bytes that are not UTF-8', () => {
  it.each([
    ['a Latin-1 byte in JSON', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d])],
    ['an overlong encoding', Buffer.from([0x22, 0xc0, 0xaf, 0x22])],
    ['an encoded surrogate', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])],
    ['a truncated sequence', Buffer.from([0x22, 0xe2, 0x82, 0x22])],
  ])('refuses %s with 400 instead of storing replacement characters', async (_case, bytes) => {
    const problem = expectProblem(await post(bytes), 400, 'bad-request');
    expect(problem.detail).toContain('not valid UTF-8');
    expectProblem(await post(bytes, 'text/plain'), 400, 'bad-request');
  });

  it.each(['iso-8859-1', 'utf-16', 'windows-1252'])('refuses charset=%s with 415', async (charset) => {
    expectProblem(await post('{}', `application/json; charset=${charset}`), 415, 'unsupported-media-type');
  });

  it('takes a UTF-8 byte order mark, and text in every plane', async () => {
    const entity = await storedEntity(await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Zoë 😀 日本"}')])));
    expect(entity.RequestBody).toEqual({ name: 'Zoë 😀 日本' });
  });

  it('refuses a control API body that is not UTF-8 with 400', async () => {
    const reply = await service().call({
      method: 'PUT',
      path: '/admin/bots/acme/entities/Latin',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]),
    });
    expectProblem(reply, 400, 'bad-request');
  });
});

describe('HTTP framing', () => {
  const head = (contentLength: string[], extra = '') =>
    `POST ${WEBHOOK} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${contentLength.map((value) => `Content-Length: ${value}\r\n`).join('')}${extra}\r\n`;

  it.each([
    ['a Content-Length that is not a number', head(['abc']) + '{}'],
    ['a negative Content-Length', head(['-1']) + '{}'],
    ['two different Content-Lengths', head(['2', '3']) + '{}'],
    ['Content-Length beside Transfer-Encoding: chunked', head(['2'], 'Transfer-Encoding: chunked\r\n') + '2\r\n{}\r\n0\r\n\r\n'],
    ['a chunk size that is not hexadecimal', head([], 'Transfer-Encoding: chunked\r\n') + 'zz\r\n{}\r\n0\r\n\r\n'],
    ['an unknown HTTP version', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['a request line that is not one', 'HELLO\r\n\r\n'],
    ['a space in the path', 'GET /heal thz HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('answers %s with a 400 problem document and closes', async (_case, request) => {
    const reply = await sendRawInProcess(service().server, request);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    expect(reply).toContain('"type":"urn:gi:problem:bad-request"');
  });
});

describe('connector source paths at deploy', () => {
  const admin = async (method: string, path: string, body?: unknown) => {
    const reply = await service().call({ method, path: `/admin${path}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: reply.status, json: json(reply) };
  };
  const deploy = (path: string) => admin('PUT', '/bots/acme/integrations/paths', { entityName: 'Order', code: 'x', sources: [{ path, content: '' }] });

  it.each([
    ['a climb out of the project', '../../etc/passwd'],
    ['a climb in the middle', 'src/../../x.ts'],
    ['a right-to-left override (U+202E)', 'src/invoice\u202Egpj.ts'],
    ['a line separator (U+2028)', 'src/a\u2028--- src/b.ts'],
    ['a paragraph separator (U+2029)', 'src/a\u2029.ts'],
    ['a zero-width joiner', 'src/a\u200d.ts'],
    ['a C1 control', 'src/a\u009b.ts'],
  ])('refuses %s with 400 and keeps nothing', async (_case, path) => {
    const reply = await deploy(path);
    expect([reply.status, reply.json.type]).toEqual([400, 'urn:gi:problem:bad-request']);
    expect(reply.json.detail).toMatch(/^sources\.0\.path: must /);
    expect((await admin('GET', '/bots/acme/integrations/paths')).status).toBe(404);
  });

  it('keeps a path under the project root, in any script', async () => {
    expect((await deploy('src/commandes/reçu-日本.ts')).status).toBe(200);
  });
});

describe('multipart framing', () => {
  const boundary = 'b0undary';
  const upload = (body: string) =>
    post(body, `multipart/form-data; boundary=${boundary}`, {}, '/api/Platform/acme/Order/ack/GenericIntegrationFileTransfer?asyncResponse=true');

  it('answers a refused field followed by a file that never ends with 400 (the file stream was left without an error handler: the process ended)', async () => {
    const body = `--${boundary}\r\nContent-Disposition: form-data; name=""\r\n\r\nx\r\n--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nunfinished`;
    expectProblem(await upload(body), 400, 'bad-request');
    expect((await service().call({ path: '/healthz' })).status).toBe(200);
  });

  it.each([
    ['no closing boundary', `--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx`],
    ['a part without headers', `--${boundary}\r\n\r\nx\r\n--${boundary}--\r\n`],
    ['a header line without a colon', `--${boundary}\r\nbroken\r\n\r\nx\r\n--${boundary}--\r\n`],
    ['a forbidden field name', `--${boundary}\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nx\r\n--${boundary}--\r\n`],
  ])('answers %s with 400', async (_case, body) => {
    expectProblem(await upload(body), 400, 'bad-request');
  });
});

describe('paths and queries', () => {
  it.each([
    ['a broken escape in a path parameter', '/api/Platform/ac%E0%A4%A/Order/ack/GenericIntegration'],
    ['a NUL in a path parameter', '/api/Platform/acme/Ord%00er/ack/GenericIntegration'],
    ['an escaped slash in a path parameter', '/api/Platform/acme/Or%2Fder/ack/GenericIntegration'],
    ['a dot-dot path parameter', '/api/Platform/acme/../ack/GenericIntegration'],
    ['a path of 10,000 characters', `/api/Platform/acme/${'x'.repeat(10_000)}/ack/GenericIntegration`],
  ])('answers %s with a 4xx', async (_case, path) => {
    const reply = await post('{}', 'application/json', {}, path);
    expect([reply.status >= 400 && reply.status < 500, reply.headers['content-type']]).toEqual([true, 'application/problem+json']);
  });

  it('keeps a query with broken escapes as sent, and refuses bad control parameters with 400', async () => {
    const entity = await storedEntity(await post('{}', 'application/json', {}, `${WEBHOOK}&a=%E0%A4%A&b=%%&c=${'x'.repeat(8000)}`));
    expect(entity.RequestParams).toBe(`a=%E0%A4%A&b=%%&c=${'x'.repeat(8000)}`);
    for (const query of ['asyncResponse=true&asyncResponse=false', 'asyncResponse=yes', 'responseContentType=%00', 'responseContentType=not%20a%20type']) {
      expectProblem(await post('{}', 'application/json', {}, `/api/Platform/acme/Order/ack/GenericIntegration?${query}`), 400, 'bad-request');
    }
  });

  it('refuses bad poll queries with 400', async () => {
    const poll = (query: string) => service().call({ path: `/api/Platform/acme/GetGenericIntegrationResponse?${query}`, headers: { authorization: `Bearer ${token}` } });
    for (const query of ['', 'invocationId=a&invocationId=b', 'invocationId=x&waitSeconds=-1', 'invocationId=x&waitSeconds=61', 'invocationId=x&waitSeconds=1e3', 'invocationId=x&responseContentType=%%']) {
      expect([query, (await poll(query)).status]).toEqual([query, 400]);
    }
  });
});
