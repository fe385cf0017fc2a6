import { assertSecretName, assertSecretValue, mergeRunSecrets, secretRedactor } from './secrets';

describe('secret names and values', () => {
  it('accept constant-like names only', () => {
    for (const good of ['API_KEY', '_X', 'A', 'K2', 'A'.repeat(64)]) expect(assertSecretName(good)).toBe(good);
    for (const bad of ['api_key', '2FA', '', 'A-B', 'A'.repeat(65), 'ÄPI']) expect(() => assertSecretName(bad)).toThrow(/upper-case letters, digits and '_'/);
  });

  it('accept values of 1 byte to 8 KiB', () => {
    expect(assertSecretValue('x'.repeat(8192))).toHaveLength(8192);
    expect(() => assertSecretValue('x'.repeat(8193))).toThrow(/at most 8192 bytes \(8 KiB\); this one has 8193/);
    expect(() => assertSecretValue('é'.repeat(4097))).toThrow(/this one has 8194/);
    expect(() => assertSecretValue('')).toThrow(/must not be empty/);
  });
});

describe('secretRedactor', () => {
  it('replaces every value of 4 characters or more, the longest first', () => {
    const redact = secretRedactor(mergeRunSecrets([['SHORT', 'abc'], ['TOKEN', 'tok_1234']], [['LONG', 'tok_1234_extra']]));
    expect(redact('a tok_1234 and tok_1234_extra, abc stays')).toBe('a [secret] and [secret], abc stays');
    expect(redact('tok_1234tok_1234')).toBe('[secret][secret]');
  });

  it('leaves text alone when the run has no secrets', () => {
    expect(secretRedactor(undefined)('anything')).toBe('anything');
    expect(secretRedactor({})('anything')).toBe('anything');
  });
});
