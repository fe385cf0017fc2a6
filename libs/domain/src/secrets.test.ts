import fc from 'fast-check';
import { assertSecretName, assertSecretValue, describeScope, mergeRunSecrets, parseSecretKey, SecretFilter, secretsNotConfigured, tooManySecrets } from './secrets';

const secretRedactor = (secrets: ConstructorParameters<typeof SecretFilter>[0]) => {
  const filter = new SecretFilter(secrets);
  return (text: string) => filter.redact(text);
};

describe('secret names and values', () => {
  it('accept constant-like names only', () => {
    for (const good of ['API_KEY', '_X', 'A', 'K2', 'A'.repeat(64)]) expect(assertSecretName(good)).toBe(good);
    for (const bad of ['api_key', '2FA', '', 'A-B', 'A'.repeat(65), 'ÄPI']) expect(() => assertSecretName(bad)).toThrow(/upper-case letters, digits and '_'/);
    expect(() => assertSecretName('a'.repeat(100))).toThrow(new RegExp(`; got '${'a'.repeat(80)}'\\.$`));
  });

  it('accept values of 1 byte to 8 KiB', () => {
    expect(assertSecretValue('x'.repeat(8192))).toHaveLength(8192);
    expect(() => assertSecretValue('x'.repeat(8193))).toThrow(/at most 8192 bytes \(8 KiB\); this one has 8193/);
    expect(() => assertSecretValue('é'.repeat(4097))).toThrow(/this one has 8194/);
    expect(() => assertSecretValue('')).toThrow(/must not be empty/);
  });
});

describe('SecretFilter.redact', () => {
  it('replaces every value of 4 characters or more, the longest first', () => {
    const redact = secretRedactor(mergeRunSecrets([['SHORT', 'abc'], ['TOKEN', 'tok_1234']], [['LONG', 'tok_1234_extra']]));
    expect(redact('a tok_1234 and tok_1234_extra, abc stays')).toBe('a [secret] and [secret], abc stays');
    expect(redact('tok_1234tok_1234')).toBe('[secret][secret]');
  });

  it('leaves text alone when the run has no secrets, and says so', () => {
    expect(secretRedactor(undefined)('anything')).toBe('anything');
    expect(secretRedactor({})('anything')).toBe('anything');
    expect([new SecretFilter(undefined).redacts, new SecretFilter({ SHORT: 'abc' }).redacts, new SecretFilter({ KEY: 'abcd' }).redacts]).toEqual([false, false, true]);
  });
});

describe('SecretFilter.cut: no 4 characters of a secret leave, wherever a cut falls', () => {
  /** Secrets are letters and digits; the text around them has none, so any such run in the output came from a secret. */
  const secret = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'), minLength: 4, maxLength: 64 });
  const filler = fc.string({ unit: fc.constantFrom(' ', '.', '-', '\n', 'é', '日', '"', ':'), maxLength: 400 });

  /** Every run of 4 characters of any secret found in `text`, `[secret]` marks aside. */
  const leaks = (text: string, secrets: string[]) => {
    const shown = text.split('[secret]').join('\u0000');
    return secrets.flatMap((value) => Array.from({ length: value.length - 3 }, (_, i) => value.slice(i, i + 4)).filter((run) => shown.includes(run)));
  };

  it('redacts before cutting, and drops a cut end that begins a secret (the text read whole, or only its window)', () => {
    fc.assert(
      fc.property(
        fc.array(secret, { minLength: 1, maxLength: 3 }),
        fc.array(fc.tuple(filler, fc.nat(2)), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 300 }),
        fc.constantFrom('', '…'),
        fc.boolean(),
        (values, pieces, max, mark, windowOnly) => {
          const filter = new SecretFilter(Object.fromEntries(values.map((v, i) => [`S${i}`, v])));
          // Fillers with secrets between them, at random places.
          const whole = pieces.map(([text, which]) => text + (values[which] ?? '')).join('');
          // The sandbox reads only the window of a long text; the cut must hold either way.
          const text = windowOnly ? whole.slice(0, filter.window(max)) : whole;
          const cut = filter.cut(text, max, mark);
          expect(cut.length).toBeLessThanOrEqual(max);
          expect(leaks(cut, values)).toEqual([]);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps a text that fits as it is, and marks a cut', () => {
    const filter = new SecretFilter({ KEY: 'sk_live_0123456789' });
    expect(filter.cut('short', 10, '…')).toBe('short');
    expect(filter.cut(`${'x'.repeat(8)}sk_live_0123456789`, 12, '…')).toBe(`${'x'.repeat(8)}[se…`);
    // Cut inside the secret, read only up to the window: the start of the secret is dropped.
    expect(filter.cut(`${'x'.repeat(8)}sk_live_01`, 12, '…')).toBe(`${'x'.repeat(8)}…`);
    expect(filter.dropSecretStart('order 42 sk_li')).toBe('order 42 ');
    expect(filter.dropSecretStart('order 42 sk')).toBe('order 42 ');
    expect(filter.dropSecretStart('order 42')).toBe('order 42');
    // Only a part of a value: a whole one was redacted before any cut.
    expect(filter.dropSecretStart('order sk_live_0123456789')).toBe('order sk_live_0123456789');
  });

  it('reads one character past the cut and the longest value less one, so that a value across the cut is read whole', () => {
    expect(new SecretFilter({ KEY: 'sk_live_0123456789', OTHER: 'abcd' }).window(10)).toBe(10 + 1 + 17);
    expect(new SecretFilter({}).window(10)).toBe(11);
  });

  it('keeps a text of exactly the size as it is, and cuts a longer one with or without a mark', () => {
    const filter = new SecretFilter({ KEY: 'sk_live_0123456789' });
    expect(filter.cut('x'.repeat(10), 10, '…')).toBe('x'.repeat(10));
    expect(filter.cut('x'.repeat(11), 10)).toBe('x'.repeat(10));
  });

  it('marks a text as long as its window as cut, though it fits once redacted: the rest of it was never read', () => {
    const filter = new SecretFilter({ KEY: 'sk_live_0123456789' });
    const text = 'sk_live_0123456789'.repeat(2);
    expect(text).toHaveLength(filter.window(18));
    expect(filter.cut(text, 18, '…')).toBe('[secret][secret]…');
    // One character shorter it is read whole, and cut: the start of the second value before the cut is dropped.
    expect(filter.cut(text.slice(0, -1), 18, '…')).toBe('[secret]…');
  });

  it('drops the longest cut end that begins any value, not a shorter one found after it', () => {
    const filter = new SecretFilter({ LONG: 'abcdef', SHORT: 'efgh' });
    expect(filter.dropSecretStart('zz abcde')).toBe('zz ');
  });
});

describe('parseSecretKey', () => {
  const bytes = Buffer.alloc(32, 7);

  it('reads 32 bytes in base64 (padded, trimmed) or base64url (unpadded)', () => {
    expect(parseSecretKey(` ${bytes.toString('base64')}\n`)).toEqual(bytes);
    expect(parseSecretKey(bytes.toString('base64url'))).toEqual(bytes);
  });

  it.each([
    ['31 bytes', Buffer.alloc(31, 7).toString('base64')],
    ['33 bytes', Buffer.alloc(33, 7).toString('base64')],
    ['a character before that is not base64', `!${bytes.toString('base64')}`],
    ['a character after that is not base64', `${bytes.toString('base64')}!`],
  ])('refuses %s, saying what a key is', (_case, text) => {
    expect(() => parseSecretKey(text)).toThrow('a secrets key is 32 random bytes in base64 (e.g. `openssl rand -base64 32`)');
  });
});

describe('secret scopes and refusals', () => {
  it('names a bot\'s scope and an integration\'s', () => {
    expect(describeScope({ botId: 'acme', integrationId: null })).toBe("Bot 'acme'");
    expect(describeScope({ botId: 'acme', integrationId: 'ack' })).toBe("Integration 'ack' of bot 'acme'");
    expect(tooManySecrets({ botId: 'acme', integrationId: null }).detail).toBe("Bot 'acme' holds 100 secrets, the most one may hold; delete one first.");
  });

  it('refuses secret writes without a key, saying how to set one', () => {
    expect(secretsNotConfigured()).toMatchObject({ code: 'secrets_not_configured', title: 'Secrets not configured', detail: expect.stringContaining('set SECRETS_KEY') });
  });
});
