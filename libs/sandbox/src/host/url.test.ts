import type { ConnectorRunRequest } from '@gi/domain';
import { createQuickJsRuntime, type QuickJsConnectorRuntime } from '../quickjs-connector.runtime';

describe('URL and URLSearchParams', () => {
  let runtime: QuickJsConnectorRuntime;
  beforeAll(async () => {
    runtime = await createQuickJsRuntime({ workers: 0 });
  });
  afterAll(() => runtime.close());

  let key = 0;
  const run = (code: string, extra: Partial<ConnectorRunRequest> = {}) =>
    runtime.run({ cacheKey: `bot/url@${++key}`, code, entity: null, timeoutMs: 5000, allowedHosts: [], ...extra });
  const value = async (expression: string) => {
    const result = await run(`Context.SetResponseEntity({ ResponseBody: await (async () => ${expression})() });`);
    if (result.kind !== 'ok') throw new Error(JSON.stringify(result));
    return result.responseBody;
  };

  it('parses the RequestParams and RequestHeaders strings of the entity', async () => {
    const result = await run(
      `const e = Context.GetRequestEntity();
       const params = new URLSearchParams(e.RequestParams);
       const headers = Object.fromEntries(new URLSearchParams(e.RequestHeaders));
       e.ResponseBody = { source: params.get('source'), tags: params.getAll('tag'), type: headers['Content-Type'], sig: headers['X-Signature'] };
       Context.SetResponseEntity(e);`,
      {
        entity: {
          RequestParams: 'source=crm&tag=a&tag=b%20c',
          RequestHeaders: 'Content-Type=application%2Fjson&X-Signature=t%3D1%2Cv1%3Dabc',
          RequestBody: null,
          ResponseBody: null,
        },
      },
    );
    expect(result).toMatchObject({ kind: 'ok', responseBody: { source: 'crm', tags: ['a', 'b c'], type: 'application/json', sig: 't=1,v1=abc' } });
  });

  it('behaves as WHATWG URL does in Node', async () => {
    const inputs = [
      ['https://user:pw@EXAMPLE.com:443/a/../b/%7Efile?q=1#frag', undefined],
      ['../c?x=y', 'https://example.com/a/b/'],
      ['http://[::1]:8080/', undefined],
      ['https://xn--nxasmq6b.example/', undefined],
      ['https://bücher.example/straße', undefined],
      ['http://2130706433/', undefined],
      ['mailto:someone@example.com', undefined],
      ['file:///etc/hosts', undefined],
    ];
    const parts = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'] as const;
    const got = await value(`${JSON.stringify(inputs)}.map(([input, base]) => { const u = new URL(input, base ?? undefined); return ${JSON.stringify(parts)}.map((p) => u[p]); })`);
    expect(got).toEqual(inputs.map(([input, base]) => parts.map((part) => new URL(input as string, base)[part])));
  });

  it('throws a TypeError for an invalid URL, and tells with canParse and parse', async () => {
    expect(await value(`[(() => { try { new URL('not a url'); } catch (e) { return e instanceof TypeError && /Invalid URL/.test(e.message); } })(), URL.canParse('x:'), URL.canParse('/p'), URL.canParse('/p', 'https://a.b'), URL.parse('nope'), String(URL.parse('https://a.b/c'))]`)).toEqual([
      true,
      true,
      false,
      true,
      null,
      'https://a.b/c',
    ]);
  });

  it('keeps a URL and its searchParams in step', async () => {
    const got = await value(`(() => {
      const u = new URL('https://api.example.com/v1/items?page=1');
      const p = u.searchParams;
      p.append('q', 'a b&c');
      const afterAppend = u.href;
      u.search = '?x=1';
      const afterSearch = [...p];
      p.delete('x');
      const afterDelete = u.href;
      u.pathname = '/v2/things';
      u.hash = 'top';
      return { afterAppend, afterSearch, afterDelete, href: u.href, json: JSON.stringify({ u }), same: u.searchParams === p };
    })()`);
    expect(got).toEqual({
      afterAppend: 'https://api.example.com/v1/items?page=1&q=a+b%26c',
      afterSearch: [['x', '1']],
      afterDelete: 'https://api.example.com/v1/items',
      href: 'https://api.example.com/v2/things#top',
      json: '{"u":"https://api.example.com/v2/things#top"}',
      same: true,
    });
  });

  it('builds URLSearchParams from strings, records and pairs, as Node does', async () => {
    const got = await value(`(() => {
      const fromRecord = new URLSearchParams({ b: '2', a: '1 ', 'ü': 'é' });
      fromRecord.sort();
      const fromPairs = new URLSearchParams([['k', 'v'], ['k', 'w']]);
      fromPairs.set('k', 'z');
      const fromString = new URLSearchParams('?a=%zz&b=+x+&=e&&c');
      let bad = '';
      try { new URLSearchParams([['only one']]); } catch (e) { bad = e.constructor.name; }
      return [fromRecord.toString(), fromPairs.toString(), [...fromString], fromString.size, fromString.has('b', ' x '), bad, String(new URLSearchParams('a=\\uD800'))];
    })()`);
    const fromRecord = new URLSearchParams({ b: '2', a: '1 ', ü: 'é' });
    fromRecord.sort();
    const fromString = new URLSearchParams('?a=%zz&b=+x+&=e&&c');
    expect(got).toEqual([fromRecord.toString(), 'k=z', [...fromString], fromString.size, true, 'TypeError', new URLSearchParams('a=\uD800').toString()]);
  });

  it('keeps every character of the text it is given: U+0000, a leading U+FEFF, lone surrogates', async () => {
    const fn = `() => { const p = new URLSearchParams('\\uFEFFa=b\\u0000c'); return [[...p], p.toString(), new URL('https://a.example/\\u0000x?\\uD800#\\uFEFF').href]; }`;
    const got = await value(`(${fn})()`);
    expect(got).toEqual(new Function(`return (${fn})();`)());
  });

  it('loads the module only when the code uses it, ahead when the code names it', async () => {
    // Named in the code: ready before the run. Built at run time: loaded on first touch, still works.
    expect(await value(`typeof URL`)).toBe('function');
    expect(await value(`typeof globalThis['UR' + 'LSearchParams']`)).toBe('function');
    expect(await value(`new globalThis['U' + 'RL']('https://a.example/x').pathname`)).toBe('/x');
    // A connector may define its own global of the same name.
    expect(await value(`(() => { globalThis.URL = 5; return URL; })()`)).toBe(5);
  });
});
