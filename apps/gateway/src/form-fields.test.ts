import { GiError } from '@gi/domain';
import { FormFields } from './form-fields';

describe('FormFields (RequestBody of a multipart call)', () => {
  it('maps names to text values, repeated names to arrays, JSON parts parsed', () => {
    const fields = new FormFields(64);
    fields.add('orderId', '42', 'text/plain');
    fields.add('tag', 'a', 'text/plain');
    fields.add('tag', 'b', 'text/plain');
    fields.add('tag', 'c', 'text/plain');
    fields.add('meta', '{"lines":[1,2]}', 'application/json');
    fields.add('ld', '[true]', 'application/ld+json');
    expect(fields.toRequestBody()).toEqual({ orderId: '42', tag: ['a', 'b', 'c'], meta: { lines: [1, 2] }, ld: [true] });
  });

  it('keeps an array sent as the first value of a JSON part apart from repeats', () => {
    const fields = new FormFields(64);
    fields.add('list', '[1,2]', 'application/json');
    fields.add('list', '3', 'text/plain');
    expect(fields.toRequestBody()).toEqual({ list: [[1, 2], '3'] });
  });

  it('is an empty object without fields', () => {
    expect(new FormFields(64).toRequestBody()).toEqual({});
  });

  it.each([
    ['a field without a name', undefined, 'x', 'text/plain', /needs a name/],
    ['a forbidden name', '__proto__', 'x', 'text/plain', /not allowed/],
    ['malformed JSON', 'meta', '{oops', 'application/json', /'meta' is sent as JSON but could not be read: it is not valid JSON/],
    ['JSON with a forbidden key', 'meta', '{"__proto__":{}}', 'application/json', /forbidden key/],
  ])('refuses %s with 400', (_case, name, value, type, message) => {
    const fields = new FormFields(64);
    let thrown: unknown;
    try {
      fields.add(name, value, type);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GiError);
    expect((thrown as GiError).code).toBe('bad_request');
    expect((thrown as GiError).detail).toMatch(message);
  });
});
