import { GiError } from './errors';
import { parseIdempotencyKey } from './idempotency';

const refusal = (values: string[]) => {
  try {
    parseIdempotencyKey(values);
  } catch (error) {
    return error as GiError;
  }
  throw new Error('accepted');
};

describe('parseIdempotencyKey', () => {
  it('is null without the header', () => {
    expect(parseIdempotencyKey([])).toBeNull();
  });

  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['"order 42, retry"', 'order 42, retry'],
    ['"say \\"hi\\" \\\\ bye"', 'say "hi" \\ bye'],
    ['  key-1  ', 'key-1'],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
  ])('reads %s as %s', (value, key) => {
    expect(parseIdempotencyKey([value])).toBe(key);
  });

  it.each([
    ['an empty value', [''], /malformed/],
    ['an empty quoted string', ['""'], /empty/],
    ['an unterminated quote', ['"abc'], /malformed/],
    ['a bad escape', ['"a\\nb"'], /malformed/],
    ['a non-ASCII character', ['"clé"'], /malformed/],
    ['a control character', ['"a\tb"'], /malformed/],
    ['a bare key with a comma (two keys)', ['a, b'], /malformed/],
    ['a key with parameters', ['"a";p=1'], /malformed/],
    ['a key of 256 characters', [`"${'k'.repeat(256)}"`], /longer than 255/],
    ['two headers', ['"a"', '"a"'], /only once/],
  ])('refuses %s with 400', (_case, values, detail) => {
    const error = refusal(values);
    expect(error).toBeInstanceOf(GiError);
    expect([error.code, error.detail]).toEqual(['bad_request', expect.stringMatching(detail)]);
  });
});
