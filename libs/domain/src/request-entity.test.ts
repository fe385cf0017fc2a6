import fc from 'fast-check';
import { GiError } from './errors';
import { assertTextMediaType, formatRequestHeaders, mediaTypeOf, parseAsyncResponse, parseJson, parseQuery, parseRequestBody, rawBodyOf, rawBodySpan, rawBodyWithin, requestBodyJson, requestEntityJson, singleControlValue } from './request-entity';

/** The error `fn` throws, as a GiError. */
const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error as GiError;
  }
  throw new Error('not refused');
};

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return (error as GiError).code;
  }
  return 'no error';
};

describe('parseQuery', () => {
  it('keeps the caller parameters in order with repeats and original encoding, without control parameters', () => {
    const { requestParams, control } = parseQuery('b=2&a=1&asyncResponse=true&a=3&name=J%C3%BCrgen+X&responseContentType=text%2Fplain&flag');
    expect(requestParams).toBe('b=2&a=1&a=3&name=J%C3%BCrgen+X&flag');
    expect(control.get('asyncResponse')).toEqual(['true']);
    expect(control.get('responseContentType')).toEqual(['text/plain']);
  });

  it('knows a control parameter however its name is escaped', () => {
    const { requestParams, control } = parseQuery('%61sync%52esponse=true&%72%65%73%70%6f%6e%73%65%43%6f%6e%74%65%6e%74%54%79%70%65=text%2Fxml&x=1');
    expect([requestParams, control.get('asyncResponse'), control.get('responseContentType')]).toEqual(['x=1', ['true'], ['text/xml']]);
  });

  it('reads a query of 8,192 malformed escapes without decoding one (each failed decode cost an exception: 40-60 ms)', () => {
    // Counted, not timed: a wall-clock bound fails on a loaded machine and under coverage instrumentation.
    const decodes = jest.spyOn(globalThis, 'decodeURIComponent');
    try {
      expect(parseQuery('&%'.repeat(8192)).requestParams).toBe('%&'.repeat(8191) + '%');
      expect(decodes).not.toHaveBeenCalled();
      parseQuery('%61syncResponse=true');
      expect(decodes).toHaveBeenCalledTimes(2);
    } finally {
      decodes.mockRestore();
    }
  });

  it('gives an empty string when there are no caller parameters', () => {
    expect(parseQuery('').requestParams).toBe('');
    expect(parseQuery('asyncResponse=false').requestParams).toBe('');
  });

  it('refuses a control parameter repeated with different values', () => {
    const { control } = parseQuery('asyncResponse=true&asyncResponse=false');
    expect(refusal(() => singleControlValue(control, 'asyncResponse'))).toMatchObject({
      code: 'bad_request',
      detail: "Query parameter 'asyncResponse' was given more than once with different values.",
    });
    expect(singleControlValue(parseQuery('asyncResponse=true&asyncResponse=true').control, 'asyncResponse')).toBe('true');
    expect(singleControlValue(control, 'responseContentType')).toBeUndefined();
  });

  it('decodes control values (a + is a space; a malformed escape is kept as sent), and reads one without = as empty', () => {
    const { requestParams, control } = parseQuery('responseContentType=text/plain;+charset%3Dutf-8&asyncResponse&x=%&responseContentType=%E0%A4%A');
    expect(requestParams).toBe('x=%');
    expect(control.get('responseContentType')).toEqual(['text/plain; charset=utf-8', '%E0%A4%A']);
    expect(control.get('asyncResponse')).toEqual(['']);
  });
});

describe('parseAsyncResponse', () => {
  it.each([[undefined, false], ['true', true], ['TRUE', true], ['false', false]])('%p -> %p', (value, expected) => {
    expect(parseAsyncResponse(value)).toBe(expected);
  });
  it.each(['yes', '1', '', 'truee'])('refuses %p', (value) => {
    expect(refusal(() => parseAsyncResponse(value))).toMatchObject({ code: 'bad_request', detail: `Query parameter 'asyncResponse' must be 'true' or 'false', not '${value}'.` });
  });
  it('quotes at most 40 characters of what it refuses', () => {
    expect(refusal(() => parseAsyncResponse('y'.repeat(50))).detail).toBe(`Query parameter 'asyncResponse' must be 'true' or 'false', not '${'y'.repeat(40)}'.`);
  });
});

describe('formatRequestHeaders', () => {
  it('keeps name case and order, encodes values and drops credentials', () => {
    const raw = ['Host', 'example.com', 'X-Trace', 'a b&c=d', 'Authorization', 'Bearer secret', 'cookie', 's=1', 'Proxy-Authorization', 'Basic x', 'X-Trace', 'second'];
    expect(formatRequestHeaders(raw)).toBe('Host=example.com&X-Trace=a%20b%26c%3Dd&X-Trace=second');
  });

  it('drops the credential headers of the integration\'s inbound auth, in any case, and a name without a value', () => {
    const raw = ['X-Hub-Signature-256', 'sha256=abc', 'X-Api-Key', 'k', 'X-Other', '1', 'Dangling'];
    expect(formatRequestHeaders(raw, new Set(['x-hub-signature-256', 'x-api-key']))).toBe('X-Other=1');
  });
});

describe('parseRequestBody', () => {
  it('parses JSON, including vendor +json types', () => {
    expect(parseRequestBody('application/json; charset=utf-8', '{"orderId":7}')).toEqual({ orderId: 7 });
    expect(parseRequestBody('application/vnd.api+json', '[1,2]')).toEqual([1, 2]);
  });

  it('gives null for an empty body', () => {
    expect(parseRequestBody('application/json', '')).toBeNull();
    expect(parseRequestBody(undefined, '')).toBeNull();
  });

  it('refuses malformed JSON with 400, saying why', () => {
    expect(refusal(() => parseRequestBody('application/json', '{"a":'))).toMatchObject({ code: 'bad_request', detail: expect.stringMatching(/^The request body could not be read: it is not valid JSON \(.+\)\.$/) });
  });

  it('refuses JSON nested deeper than the limit, naming the limit', () => {
    const error = refusal(() => parseJson('[[[1]]]', 2));
    expect([error.code, error.detail, error.extensions]).toEqual([
      'bad_request',
      'The request body could not be read: it nests arrays and objects deeper than the limit of 2 levels.',
      { maxJsonDepth: 2 },
    ]);
    expect(parseJson('[[1]]', 2)).toEqual([[1]]);
  });

  it.each(['{"__proto__":{"polluted":true}}', '{"a":{"constructor":{"prototype":{"polluted":true}}}}'])('refuses prototype pollution %s', (body) => {
    expect(refusal(() => parseRequestBody('application/json', body))).toMatchObject({
      code: 'bad_request',
      detail: 'The request body could not be read: it contains a forbidden key (__proto__ or constructor.prototype).',
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('parses forms into objects, repeated keys into arrays', () => {
    expect(parseRequestBody('application/x-www-form-urlencoded', 'a=1&b=x+y&a=2&a=3')).toEqual({ a: ['1', '2', '3'], b: 'x y' });
    expect(refusal(() => parseRequestBody('application/x-www-form-urlencoded', 'a=1&constructor=1'))).toMatchObject({
      code: 'bad_request',
      detail: "The form field name 'constructor' is not allowed.",
    });
  });

  it('keeps any other text as a string', () => {
    expect(parseRequestBody('text/plain', 'hello')).toBe('hello');
    expect(parseRequestBody('application/xml', '<a>1</a>')).toBe('<a>1</a>');
    expect(parseRequestBody(undefined, 'raw')).toBe('raw');
  });

  it('sends binary and multipart bodies to the file endpoint with 415', () => {
    for (const type of ['multipart/form-data; boundary=x', 'application/octet-stream', 'image/png', 'audio/mpeg', 'video/mp4', 'font/woff2', 'application/zip', 'Application/PDF']) {
      expect(codeOf(() => parseRequestBody(type, 'x'))).toBe('unsupported_media_type');
    }
    expect(refusal(() => assertTextMediaType('image/png')).detail).toBe(
      "Content-Type 'image/png' is not accepted here: send JSON or text, or use GenericIntegrationFileTransfer for files.",
    );
    // Only the top-level types of images, sound, video and fonts: a text type that names one is text.
    expect(assertTextMediaType('text/x-image/notes')).toBe('text/x-image/notes');
  });

  it('reads the bare media type, trimmed and in lower case, of a Content-Type with parameters', () => {
    expect(mediaTypeOf(' Application/JSON ; charset=utf-8')).toBe('application/json');
    expect(mediaTypeOf(undefined)).toBe('');
    expect(parseRequestBody('application/json ; charset=utf-8', '{"a":1}')).toEqual({ a: 1 });
  });
});

describe('requestBodyJson and requestEntityJson', () => {
  const fields = { RequestParams: 'a=1', RequestHeaders: 'Host=x', ResponseBody: null };
  /** The entity as the body parsed into it would give, the way it was stored before. */
  const parsedEntity = (contentType: string, text: string) => ({ ...fields, RequestBody: parseRequestBody(contentType, text) });

  it('keeps a JSON body as sent, so the stored entity reads as the parsed one would', () => {
    const text = '{ "orderId" : 42.0,\r\n "note": "caf\\u00e9", "lines": [ ] }\n';
    const json = requestEntityJson(fields, requestBodyJson('application/json', text));
    expect(json).toBe(`{"RequestParams":"a=1","RequestHeaders":"Host=x","RequestBody":${text},"ResponseBody":null}`);
    expect(JSON.parse(json)).toEqual(parsedEntity('application/json', text));
  });

  it('keeps a ResponseBody already set, and null for none', () => {
    expect(JSON.parse(requestEntityJson({ ...fields, ResponseBody: { done: true } }, '1')).ResponseBody).toEqual({ done: true });
    expect(JSON.parse(requestEntityJson({ ...fields, ResponseBody: undefined }, '1')).ResponseBody).toBeNull();
  });

  it('lists the fields in the order of the spec, RequestFiles last', () => {
    const files = [{ Id: 'f1', FileName: 'a.csv', ContentType: 'text/csv', Size: 1, Sha256: 'x', PartName: 'file' }];
    const json = requestEntityJson({ ...fields, RequestFiles: files }, '{"note":"x"}');
    expect(Object.keys(JSON.parse(json))).toEqual(['RequestParams', 'RequestHeaders', 'RequestBody', 'ResponseBody', 'RequestFiles']);
    expect(JSON.parse(json).RequestFiles).toEqual(files);
  });

  it('refuses what parseRequestBody refuses, with the same errors', () => {
    for (const text of ['{"a":', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', `${'['.repeat(70)}${']'.repeat(70)}`, '{} {}']) {
      expect(codeOf(() => requestBodyJson('application/json', text))).toBe('bad_request');
      expect(codeOf(() => requestBodyJson('application/json', text))).toBe(codeOf(() => parseRequestBody('application/json', text)));
    }
    expect(codeOf(() => requestBodyJson('application/octet-stream', 'x'))).toBe('unsupported_media_type');
  });

  it('serializes every other body as parseRequestBody makes it: forms, text, an empty body', () => {
    for (const [type, text] of [['application/x-www-form-urlencoded', 'a=1&a=2&b=x'], ['text/plain', 'hello "there"'], ['application/xml', '<a/>'], ['application/json', ''], ['text/plain', '']]) {
      expect(JSON.parse(requestEntityJson(fields, requestBodyJson(type, text)))).toEqual(parsedEntity(type, text));
    }
  });

  it('gives the entity the parsed body would for any JSON, however it is spaced (property)', () => {
    const spaced = fc.tuple(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(undefined, 1, 2, '\t'), fc.constantFrom('', ' ', '\r\n\t '));
    fc.assert(
      fc.property(spaced, ([value, indent, around]) => {
        const text = `${around}${JSON.stringify(value, null, indent)}${around}`;
        // A generated key may be __proto__: then both refuse it alike.
        const refusal = codeOf(() => parseRequestBody('application/json', text));
        if (refusal !== 'no error') return void expect(codeOf(() => requestBodyJson('application/json', text))).toBe(refusal);
        const json = requestEntityJson(fields, requestBodyJson('application/json', text));
        expect(JSON.parse(json)).toEqual(parsedEntity('application/json', text));
      }),
    );
  });
});

describe('rawBodySpan and rawBodyOf', () => {
  const fields = { RequestParams: 'RequestBody=1', RequestHeaders: 'Host=x', ResponseBody: null };
  const entityOf = (type: string, text: string) => requestEntityJson(fields, requestBodyJson(type, text));

  it('finds a JSON body in its entity as sent, and gives it back from the span', () => {
    const text = ' { "orderId" : 42.0, "RequestBody": "x" }\n';
    const entity = entityOf('application/json', text);
    const span = rawBodySpan(entity, text);
    expect(span).not.toBeNull();
    expect(rawBodyOf(entity, null, span)).toBe(text);
  });

  it('has no span where the body is not in the entity as sent: forms, text, files, an empty body, another text', () => {
    expect(rawBodySpan(entityOf('application/x-www-form-urlencoded', 'a=1'), 'a=1')).toBeNull();
    expect(rawBodySpan(entityOf('text/plain', 'null'), 'null')).toBeNull();
    expect(rawBodySpan(entityOf('application/json', ''), '')).toBeNull();
    expect(rawBodySpan(entityOf('application/json', '{"a":1}'), null)).toBeNull();
    expect(rawBodySpan(entityOf('application/json', '{"a":1}'), '{"a":2}')).toBeNull();
    expect(rawBodySpan(entityOf('application/json', '{"a":1}'), 'x{"a":1}')).toBeNull();
    const withFiles = requestEntityJson({ ...fields, RequestFiles: [] }, '{"a":1}');
    expect(rawBodySpan(withFiles, '{"a":1}')).toBeNull();
  });

  it('finds a span only where the entity ends as a new one and the body lies before that end, after its start', () => {
    const tail = ',"ResponseBody":null}';
    // The text at the span's place equals the body, but the entity does not end as a new one.
    const answered = requestEntityJson({ ...fields, ResponseBody: { note: 'x'.repeat(30) } }, '1');
    const end = answered.length - tail.length;
    expect(rawBodySpan(answered, answered.slice(5, end))).toBeNull();
    // A body that would have to start the entity is not one it holds.
    expect(rawBodySpan(`{"a":1}${tail}`, '{"a":1}')).toBeNull();
    expect(rawBodySpan(` {"a":1}${tail}`, '{"a":1}')).toEqual([1, 8]);
  });

  it('gives the raw body from within the entity when it lies there, else the body itself', () => {
    const text = '{"orderId":42}';
    const entity = entityOf('application/json', text);
    expect(rawBodyWithin(entity, text)).toBe(text);
    expect(rawBodyWithin(entityOf('text/plain', 'hello'), 'hello')).toBe('hello');
    expect(rawBodyWithin(entity, null)).toBeNull();
  });

  it('keeps a body given as text over a span, and gives none without either', () => {
    expect(rawBodyOf('{"x":1}', 'sent', [1, 3])).toBe('sent');
    expect(rawBodyOf('{"x":1}', null, null)).toBeNull();
    expect(rawBodyOf('{"x":1}', '', null)).toBe('');
  });

  it('gives back exactly the body for any JSON text, or finds no span (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom('', ' ', '\r\n'), fc.string(), (value, around, other) => {
        const text = `${around}${JSON.stringify(value)}${around}`;
        if (codeOf(() => parseRequestBody('application/json', text)) !== 'no error') return;
        const entity = entityOf('application/json', text);
        expect(rawBodyOf(entity, null, rawBodySpan(entity, text))).toBe(text);
        const span = rawBodySpan(entity, other);
        if (span) expect(rawBodyOf(entity, null, span)).toBe(other);
      }),
    );
  });
});
