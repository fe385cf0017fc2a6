import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';
import { sameFunctionOnBothSides } from './globals.fixture';

/** What the test API saw of a request. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local downstream API: echoes requests, redirects, compresses, stalls. */
function startServer(): Promise<{ server: Server; base: string; seen: Seen[]; closed: string[] }> {
  const seen: Seen[] = [];
  const closed: string[] = [];
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = Buffer.concat(chunks);
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: body.toString('utf8') });
      const json = (value: unknown, headers: Record<string, string | string[]> = {}) => {
        res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      switch (url.pathname) {
        case '/json':
          return json({ hello: 'world' }, { 'Set-Cookie': ['a=1', 'b=2'], 'X-Multi': 'one' });
        case '/echo':
          return json({ method: req.method, headers: req.headers, body: body.toString('utf8'), bytes: [...body.subarray(0, 16)] });
        case '/redirect':
          res.writeHead(Number(url.searchParams.get('status') ?? 302), { Location: url.searchParams.get('to') ?? '/json' });
          return res.end('moved');
        case '/loop':
          res.writeHead(302, { Location: '/loop' });
          return res.end();
        case '/gzip':
        case '/deflate':
        case '/br': {
          const text = Buffer.from(JSON.stringify({ compressed: url.pathname }));
          const encoded = url.pathname === '/gzip' ? gzipSync(text) : url.pathname === '/deflate' ? deflateSync(text) : brotliCompressSync(text);
          res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': url.pathname.slice(1) });
          return res.end(encoded);
        }
        case '/bomb':
          res.writeHead(200, { 'Content-Encoding': 'gzip' });
          return res.end(bomb);
        case '/big':
          return res.end('x'.repeat(200_000));
        case '/not-json':
          res.writeHead(200, { 'Content-Type': 'application/json' });
          return res.end('{ not json');
        case '/no-content':
          res.writeHead(204);
          return res.end();
        case '/multipart':
          res.writeHead(200, { 'Content-Type': 'multipart/form-data; boundary=XyZ' });
          return res.end('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nfirst\r\n--XyZ\r\nContent-Disposition: form-data; name="f"; filename="n.txt"\r\nContent-Type: text/plain\r\n\r\nfile body\r\n--XyZ--\r\n');
        case '/form':
          res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded' });
          return res.end('a=1&b=two+words&a=3');
        case '/slow':
          res.on('close', () => closed.push(req.url ?? ''));
          setTimeout(() => res.end('late'), 3000).unref();
          return;
        default:
          res.writeHead(404, 'Nothing Here');
          return res.end('no such page');
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, closed })));
}

describe('fetch, Request, Response, Headers', () => {
  let api: Awaited<ReturnType<typeof startServer>>;
  /** A second origin (another port), for redirects across origins. */
  let other: Awaited<ReturnType<typeof startServer>>;
  let runtime: QuickJsConnectorRuntime;
  let strict: QuickJsConnectorRuntime;

  beforeAll(async () => {
    [api, other] = await Promise.all([startServer(), startServer()]);
    runtime = await createQuickJsRuntime({ workers: 0, http: { trustedAddresses: ['127.0.0.1'], maxResponseBytes: 100_000, defaultTimeoutMs: 1500 } });
    strict = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(async () => {
    await Promise.all([runtime.close(), strict.close()]);
    for (const { server } of [api, other]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  beforeEach(() => {
    api.seen.length = 0;
    other.seen.length = 0;
  });

  const { inSandbox, inNode } = sameFunctionOnBothSides(() => runtime, 'fetch');
  /** The function's result in a connector allowed to call the test APIs. */
  const connector = (fn: string, input: unknown = null) => inSandbox(fn, input, { allowedHosts: ['127.0.0.1'] });
  /** `fn`'s result in a connector and in Node: the same. */
  const same = async (fn: string, input: unknown = null) => expect(await connector(fn, input)).toEqual(await inNode(fn, input));
  /** The error a promise rejects with, as `[name, message]`. */
  const failure = (expression: string) => `(async () => { try { await ${expression}; return 'resolved'; } catch (e) { return [e.name, e.message]; } })()`;

  it('GETs JSON: status, headers, url, type, body', async () => {
    const result = await connector(`async () => {
      const r = await fetch('${api.base}/json');
      return { status: r.status, ok: r.ok, statusText: r.statusText, type: r.type, url: r.url, redirected: r.redirected, used: [r.bodyUsed],
        contentType: r.headers.get('CONTENT-TYPE'), cookies: r.headers.getSetCookie(), multi: r.headers.get('x-multi'),
        body: await r.json(), usedAfter: r.bodyUsed, again: await ${failure('r.text()')} };
    }`);
    expect(result).toEqual({
      status: 200,
      ok: true,
      statusText: 'OK',
      type: 'basic',
      url: `${api.base}/json`,
      redirected: false,
      used: [false],
      contentType: 'application/json',
      cookies: ['a=1', 'b=2'],
      multi: 'one',
      body: { hello: 'world' },
      usedAfter: true,
      again: ['TypeError', 'Body is unusable: the body has already been read.'],
    });
  });

  it('answers a status that is not ok as a response, not an error', async () => {
    expect(await connector(`async () => { const r = await fetch('${api.base}/missing'); return [r.status, r.ok, r.statusText, await r.text()]; }`)).toEqual([404, false, 'Nothing Here', 'no such page']);
  });

  it('sends methods, headers and each kind of body with its Content-Type', async () => {
    const result = (await connector(`async () => {
      const echo = async (init) => { const r = await fetch('${api.base}/echo', init); const e = await r.json(); return [e.method, e.headers['content-type'] ?? null, e.body]; };
      const form = new FormData(); form.append('name', 'a "b"\\nc'); form.append('file', new Blob(['bytes'], { type: 'text/csv' }), 'x.csv');
      return {
        text: await echo({ method: 'POST', body: 'héllo' }),
        bytes: await echo({ method: 'PUT', body: new Uint8Array([104, 105]) }),
        buffer: await echo({ method: 'POST', body: new Uint8Array([0, 111, 107, 0]).buffer.slice(1, 3) }),
        view: await echo({ method: 'POST', body: new DataView(new Uint8Array([120, 121, 122]).buffer, 1, 2) }),
        params: await echo({ method: 'POST', body: new URLSearchParams({ q: 'a b', r: '&' }) }),
        blob: await echo({ method: 'POST', body: new Blob(['{"a":1}'], { type: 'application/json' }) }),
        json: await echo({ method: 'POST', body: JSON.stringify({ a: 1 }), headers: { 'Content-Type': 'application/json' } }),
        response: await echo({ method: 'PATCH', body: await Response.json({ b: 2 }).text(), headers: [['content-type', 'application/json']] }),
        request: await echo(new Request('${api.base}/echo', { method: 'DELETE', headers: new Headers({ 'X-Token': 't' }) })),
        form: await echo({ method: 'POST', body: form }),
        head: (await fetch('${api.base}/json', { method: 'HEAD' })).status,
        custom: (await (await fetch('${api.base}/echo', { headers: { 'X-Token': 'secret', 'x-a': 'b' } })).json()).headers,
      };
    }`)) as Record<string, [string, string | null, string]> & { custom: Record<string, string> };
    expect(result.text).toEqual(['POST', 'text/plain;charset=UTF-8', 'héllo']);
    expect(result.bytes).toEqual(['PUT', null, 'hi']);
    expect(result.buffer).toEqual(['POST', null, 'ok']);
    expect(result.view).toEqual(['POST', null, 'yz']);
    expect(result.params).toEqual(['POST', 'application/x-www-form-urlencoded;charset=UTF-8', 'q=a+b&r=%26']);
    expect(result.blob).toEqual(['POST', 'application/json', '{"a":1}']);
    expect(result.json).toEqual(['POST', 'application/json', '{"a":1}']);
    expect(result.response).toEqual(['PATCH', 'application/json', '{"b":2}']);
    expect(result.request).toEqual(['DELETE', null, '']);
    expect(result.head).toBe(200);
    expect(result.custom).toMatchObject({ 'x-token': 'secret', 'x-a': 'b', 'accept-encoding': 'gzip, deflate, br' });
    const [method, type, body] = result.form;
    expect(method).toBe('POST');
    const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(type ?? '')?.[1];
    expect(body).toBe(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\na "b"\r\nc\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.csv"\r\nContent-Type: text/csv\r\n\r\nbytes\r\n--${boundary}--\r\n`,
    );
    // The multipart body, parsed by Node's own fetch, is what was sent.
    const parsed = await new Response(body, { headers: { 'Content-Type': type ?? '' } }).formData();
    expect(parsed.get('name')).toBe('a "b"\r\nc');
    expect(await (parsed.get('file') as File).text()).toBe('bytes');
  });

  it('follows redirects (each mode), drops credentials across origins, turns 303 and POST-after-302 into GET', async () => {
    const to = (target: string, status = 302) => `${api.base}/redirect?status=${status}&to=${encodeURIComponent(target)}`;
    const result = (await connector(`async () => {
      const follow = await fetch('${to('/json')}');
      const manual = await fetch('${to('/json')}', { redirect: 'manual' });
      const echo = async (url, init) => { const r = await fetch(url, init); const e = await r.json(); return { method: e.method, body: e.body, auth: e.headers.authorization ?? null, cookie: e.headers.cookie ?? null, proxy: e.headers['proxy-authorization'] ?? null, custom: e.headers['x-custom'] ?? null, type: e.headers['content-type'] ?? null, redirected: r.redirected }; };
      const secrets = { Authorization: 'Bearer s', Cookie: 'c=1', 'Proxy-Authorization': 'p', 'X-Custom': 'kept' };
      return {
        follow: [follow.status, follow.redirected, follow.url, await follow.json()],
        manual: [manual.status, manual.redirected, manual.headers.get('location'), await manual.text()],
        error: await ${failure(`fetch('${to('/json')}', { redirect: 'error' })`)},
        sameOrigin: await echo('${to('/echo', 307)}', { headers: secrets }),
        crossOrigin: await echo('${to(`${other.base}/echo`, 307)}', { headers: secrets }),
        see303: await echo('${to('/echo', 303)}', { method: 'PUT', body: 'gone', headers: { 'Content-Type': 'text/plain' } }),
        post302: await echo('${to('/echo', 302)}', { method: 'POST', body: 'gone' }),
        post301: await echo('${to('/echo', 301)}', { method: 'POST', body: 'gone' }),
        post307: await echo('${to('/echo', 307)}', { method: 'POST', body: 'kept' }),
        put302: await echo('${to('/echo', 302)}', { method: 'PUT', body: 'kept' }),
        loop: await ${failure(`fetch('${api.base}/loop')`)},
      };
    }`)) as Record<string, unknown>;
    expect(result.follow).toEqual([200, true, `${api.base}/json`, { hello: 'world' }]);
    expect(result.manual).toEqual([302, false, '/json', 'moved']);
    expect(result.error).toEqual(['TypeError', `127.0.0.1:${new URL(api.base).port} answered with a redirect (302), and the request's redirect mode is 'error'.`]);
    expect(result.sameOrigin).toMatchObject({ auth: 'Bearer s', cookie: 'c=1', proxy: 'p', custom: 'kept', redirected: true });
    expect(result.crossOrigin).toMatchObject({ auth: null, cookie: null, proxy: null, custom: 'kept', redirected: true });
    expect(result.see303).toMatchObject({ method: 'GET', body: '', type: null });
    expect(result.post302).toMatchObject({ method: 'GET', body: '' });
    expect(result.post301).toMatchObject({ method: 'GET', body: '' });
    expect(result.post307).toMatchObject({ method: 'POST', body: 'kept' });
    expect(result.put302).toMatchObject({ method: 'PUT', body: 'kept' });
    expect(result.loop).toEqual(['TypeError', 'Too many redirects (more than 5).']);
    expect(other.seen.map((s) => s.headers.authorization)).toEqual([undefined]);
  });

  it('decompresses gzip, deflate and br; a decompression bomb stops at the size limit', async () => {
    const result = await connector(`async () => {
      const read = async (path) => { const r = await fetch('${api.base}' + path); return [r.headers.get('content-encoding'), await r.json()]; };
      return { gzip: await read('/gzip'), deflate: await read('/deflate'), br: await read('/br'), bomb: await ${failure(`fetch('${api.base}/bomb')`)}, big: await ${failure(`fetch('${api.base}/big')`)} };
    }`);
    expect(result).toEqual({
      gzip: ['gzip', { compressed: '/gzip' }],
      deflate: ['deflate', { compressed: '/deflate' }],
      br: ['br', { compressed: '/br' }],
      bomb: ['TypeError', `The response from 127.0.0.1:${new URL(api.base).port} is larger than the limit of 100000 bytes.`],
      big: ['TypeError', `The response from 127.0.0.1:${new URL(api.base).port} is larger than the limit of 100000 bytes.`],
    });
  });

  it('aborts with the signal: before sending, while waiting, with a reason, and on AbortSignal.timeout', async () => {
    const started = Date.now();
    const result = await connector(`async () => {
      const before = new AbortController(); before.abort();
      /** A signal aborted 50 ms from now. */
      const later = (reason) => { const c = new AbortController(); setTimeout(() => c.abort(reason), 50); return c.signal; };
      return {
        before: await ${failure(`fetch('${api.base}/slow?before', { signal: before.signal })`)},
        during: await ${failure(`fetch('${api.base}/slow?during', { signal: later() })`)},
        reason: await ${failure(`fetch('${api.base}/slow?reason', { signal: later(new Error('enough')) })`)},
        timeout: await ${failure(`fetch('${api.base}/slow?timeout', { signal: AbortSignal.timeout(50) })`)},
        request: await ${failure(`fetch(new Request('${api.base}/slow?request', { signal: later() }))`)},
        afterwards: (await fetch('${api.base}/json')).status,
      };
    }`);
    expect(result).toEqual({
      before: ['AbortError', 'This operation was aborted'],
      during: ['AbortError', 'This operation was aborted'],
      reason: ['Error', 'enough'],
      timeout: ['TimeoutError', 'The operation was aborted due to timeout'],
      request: ['AbortError', 'This operation was aborted'],
      afterwards: 200,
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(api.seen.map((s) => s.url)).not.toContain('/slow?before');
    // Each aborted exchange the server received closed its connection (the server hears it when its loop
    // gets to it: a busy machine delays that). On a busy machine a 50 ms abort can also come before the
    // request left, which the server then never sees: only what reached it is held to this.
    const aborted = ['/slow?during', '/slow?reason', '/slow?timeout', '/slow?request'];
    const reached = () => aborted.filter((url) => api.seen.some((s) => s.url === url));
    for (const until = Date.now() + 3000; !reached().every((url) => api.closed.includes(url)) && Date.now() < until; ) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(reached().length).toBeGreaterThan(0);
    expect(api.closed).toEqual(expect.arrayContaining(reached()));
  });

  it('times out at the HTTP time limit with a TypeError', async () => {
    expect(await connector(`async () => ${failure(`fetch('${api.base}/slow?limit')`)}`)).toEqual(['TypeError', `The request to 127.0.0.1:${new URL(api.base).port} timed out after 1500 ms.`]);
  });

  it('rejects with a TypeError saying why: allowed hosts, the egress guard, schemes, credentials, bodies of GET', async () => {
    const port = new URL(api.base).port;
    const result = await inSandbox(
      `async () => ({
        notAllowed: await ${failure(`fetch('${api.base}/json')`)},
        loopback: await ${failure(`fetch('http://[::1]:${port}/json')`)},
        scheme: await ${failure(`fetch('ftp://[::1]/x')`)},
        credentials: await ${failure(`fetch('http://u:p@[::1]/x')`)},
        relative: await ${failure(`fetch('/json')`)},
        getBody: await ${failure(`fetch('http://[::1]/x', { body: 'x' })`)},
        method: await ${failure(`fetch('http://[::1]/x', { method: 'CONNECT' })`)},
        header: await ${failure(`fetch('http://[::1]/x', { headers: { 'X-A': 'a\\nb' } })`)},
      })`,
      null,
      { allowedHosts: ['[::1]'] },
    );
    expect(result).toEqual({
      notAllowed: ['TypeError', `The host '127.0.0.1:${port}' is not in this integration's allowed hosts.`],
      loopback: ['TypeError', 'The address ::1 is private, loopback or link-local and cannot be requested.'],
      scheme: ['TypeError', 'Only http and https URLs can be requested, not ftp:.'],
      credentials: ['TypeError', 'A request URL must not include credentials; send an Authorization header instead.'],
      relative: ['TypeError', "'/json' is not a valid absolute URL."],
      getBody: ['TypeError', 'A GET or HEAD request cannot have a body.'],
      method: ['TypeError', 'The HTTP method CONNECT is not allowed.'],
      header: ['TypeError', 'A header value must not contain NUL, CR or LF.'],
    });
    expect(api.seen).toEqual([]);
  });

  it('reads bodies as text, JSON (a SyntaxError when it is not), bytes, blobs and form data; clones before reading', async () => {
    const result = await connector(`async () => {
      const r = await fetch('${api.base}/json');
      const copy = r.clone();
      const bytes = await r.bytes();
      const blob = await copy.blob();
      const multipart = await (await fetch('${api.base}/multipart')).formData();
      const file = multipart.get('f');
      return {
        bytes: [bytes.constructor.name, bytes.length], blob: [blob.size, blob.type, await blob.text()],
        cloneAfter: (() => { try { r.clone(); return 'cloned'; } catch (e) { return e.name; } })(),
        badJson: await ${failure(`fetch('${api.base}/not-json').then((x) => x.json())`)},
        noContent: await fetch('${api.base}/no-content').then(async (x) => [x.status, x.bodyUsed, await x.text(), x.bodyUsed]),
        multipart: [multipart.get('a'), file.name, file.type, await file.text(), file instanceof File, file instanceof Blob],
        urlencoded: [...(await (await fetch('${api.base}/form')).formData())],
        buffer: await fetch('${api.base}/json').then((x) => x.arrayBuffer()).then((b) => [b.constructor.name, b.byteLength]),
        notForm: await ${failure(`fetch('${api.base}/json').then((x) => x.formData())`)},
      };
    }`);
    expect(result).toEqual({
      bytes: ['Uint8Array', 17],
      blob: [17, 'application/json', '{"hello":"world"}'],
      cloneAfter: 'TypeError',
      badJson: ['SyntaxError', expect.any(String)],
      noContent: [204, false, '', false],
      multipart: ['first', 'n.txt', 'text/plain', 'file body', true, true],
      urlencoded: [
        ['a', '1'],
        ['b', 'two words'],
        ['a', '3'],
      ],
      buffer: ['ArrayBuffer', 17],
      notForm: ['TypeError', "The body cannot be read as form data: its Content-Type is 'application/json', not multipart/form-data or application/x-www-form-urlencoded."],
    });
  });

  it('makes Headers, Requests and Responses as Node does', async () => {
    await same(`async () => {
      const h = new Headers([['B', '1'], ['a', '2'], ['set-cookie', 'x=1'], ['Set-Cookie', 'y=2'], ['b', ' 3 ']]);
      h.set('C', 'c'); h.delete('missing');
      const seen = []; h.forEach((value, name) => seen.push(name + '=' + value));
      const fromRecord = new Headers({ 'X-One': '1', 'x-two': '2' });
      const errors = ['bad name', 'a\\u0100'].map((n) => { try { new Headers([[n, 'v']]); return 'made'; } catch (e) { return e.name; } });
      return { entries: [...h], keys: [...h.keys()], values: [...h.values()], seen, get: [h.get('b'), h.get('SET-COOKIE'), h.has('A'), h.get('none')], cookies: h.getSetCookie(), fromRecord: [...fromRecord], errors };
    }`);
    await same(`async () => {
      const json = Response.json({ a: [1] }, { status: 201, headers: { 'X-A': '1' } });
      const plain = new Response('text');
      const empty = new Response(null, { status: 204 });
      const error = Response.error();
      const redirect = Response.redirect('https://a.example/x', 301);
      const request = new Request('https://a.example/p?q', { method: 'post', body: 'b', headers: { 'X-Y': 'z' } });
      const copy = new Request(request);
      const thrown = (f) => { try { f(); return 'made'; } catch (e) { return e.name; } };
      return {
        json: [json.status, json.headers.get('content-type'), json.headers.get('x-a'), await json.json()],
        plain: [plain.status, plain.ok, plain.statusText, plain.type, plain.url, plain.redirected, plain.headers.get('content-type'), await plain.text()],
        empty: [empty.status, await empty.text()],
        error: [error.type, error.status, error.ok, thrown(() => error.headers.set('a', 'b'))],
        redirect: [redirect.status, redirect.headers.get('location')],
        request: [request.method, request.url, request.redirect, request.headers.get('content-type'), request.signal.aborted, copy.method, request.bodyUsed, await copy.text()],
        refused: [thrown(() => new Response('x', { status: 204 })), thrown(() => new Response('x', { status: 600 })), thrown(() => Response.redirect('https://a.example/', 200)), thrown(() => new Request('https://a.example/', { body: 'x' })), thrown(() => new Request('https://a.example/', { method: 'TRACE' }))],
        blob: [new Blob(['ab', new Uint8Array([99]), new Blob(['d'])], { type: 'Text/Plain' }).size, new Blob([], { type: 'Text/Plain' }).type, await new Blob(['abcdef']).slice(1, -1).text(), await new Blob(['abcdef']).slice(-2).text()],
        file: [new File(['x'], 'f.txt', { type: 'text/plain', lastModified: 5 }).name, new File(['x'], 'f.txt', { lastModified: 5 }).lastModified],
        tags: [Object.prototype.toString.call(plain), Object.prototype.toString.call(new Headers()), Object.prototype.toString.call(new Blob())],
      };
    }`);
  });

  it('keeps FormData entries as Node does, and clones Blobs and Files with structuredClone', async () => {
    await same(`async () => {
      const form = new FormData();
      form.append('a', '1'); form.append('b', new Blob(['x'], { type: 'text/plain' })); form.append('c', new Blob(['y']), 'y.bin'); form.append('a', '2');
      form.set('d', 'one'); form.delete('missing');
      const b = form.get('b'), c = form.get('c');
      return { keys: [...form.keys()], all: form.getAll('a'), has: [form.has('a'), form.has('z')], b: [b.name, b.type, b.size], c: [c.name, c.type] };
    }`);
    // Node 20 loses a File's name and date in a clone; the HTML standard keeps them.
    const cloned = await connector(`async () => {
      const file = structuredClone(new File(['data'], 'n.txt', { type: 'text/plain', lastModified: 7 }));
      const blob = structuredClone(new Blob(['b'], { type: 'a/b' }));
      return [file.name, file.type, file.lastModified, await file.text(), file instanceof File, blob.type, await blob.text(), blob instanceof File];
    }`);
    expect(cloned).toEqual(['n.txt', 'text/plain', 7, 'data', true, 'a/b', 'b', false]);
  });

  it('keeps a trivial connector free of the module: it loads only for code that names it', async () => {
    const result = await strict.run({ cacheKey: 'bot/trivial@1', code: `Context.SetResponseEntity({ ResponseBody: Object.getOwnPropertyDescriptor(globalThis, 'Res' + 'ponse').get !== undefined });`, entity: null, timeoutMs: 2000, allowedHosts: [] });
    expect(result).toMatchObject({ kind: 'ok', responseBody: true });
    const touched = await strict.run({ cacheKey: 'bot/trivial@2', code: `const name = ['Res', 'ponse'].join(''); Context.SetResponseEntity({ ResponseBody: await new globalThis[name]('lazy').text() });`, entity: null, timeoutMs: 2000, allowedHosts: [] });
    expect(touched).toMatchObject({ kind: 'ok', responseBody: 'lazy' });
  });
});
