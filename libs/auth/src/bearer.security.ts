import fc from 'fast-check';
import { GiError } from '@gi/domain';
import type { TokenRecord, TokenStore } from '@gi/domain';
import { bearerToken, verifyAdminBearer } from './bearer';
import { createTokenService } from './token.service';

/**
 * Property-based fuzzing of the Authorization header, the first thing every protected route reads:
 * any value is a token or a 401, never another error, in time linear in its length.
 */

const unauthorizedOrValue = <T>(run: () => T): T | GiError => {
  try {
    return run();
  } catch (error) {
    if (error instanceof GiError && error.code === 'unauthorized') return error;
    throw error;
  }
};

const tokenChars = fc.string({ unit: fc.constantFrom(...'ABCXYZabcxyz0189-._~+/'.split('')), minLength: 1, maxLength: 200 });

describe('bearerToken', () => {
  it('gives back the token of every well-formed header, whatever the case of the scheme and the spaces around', () => {
    fc.assert(
      fc.property(tokenChars, fc.constantFrom('Bearer', 'bearer', 'BEARER'), fc.integer({ min: 1, max: 3 }), fc.nat({ max: 2 }), fc.nat({ max: 3 }), (token, scheme, spaces, trailing, padding) => {
        expect(bearerToken(`${scheme}${' '.repeat(spaces)}${token}${'='.repeat(padding)}${' '.repeat(trailing)}`)).toBe(token + '='.repeat(padding));
      }),
      { numRuns: 500 },
    );
  });

  it('answers anything else with 401, in linear time', () => {
    const header = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.array(fc.constantFrom('Bearer ', 'a', '=', ' ', '!'), { minLength: 1, maxLength: 4 }).map((pattern) => pattern.join('').repeat(4096)),
    );
    fc.assert(
      fc.property(header, (value) => {
        const elapsedMs = () => {
          const started = process.hrtime.bigint();
          unauthorizedOrValue(() => bearerToken(value));
          unauthorizedOrValue(() => verifyAdminBearer(value, 'the-admin-token-0123456789abcdef'));
          return Number(process.hrtime.bigint() - started) / 1e6;
        };
        // The best of three: backtracking is slow every time, a collection or a busy machine once.
        expect(Math.min(elapsedMs(), elapsedMs(), elapsedMs())).toBeLessThan(50);
      }),
      { numRuns: 300 },
    );
  });
});

describe('TokenService.verify', () => {
  const records = new Map<string, TokenRecord>();
  const store: TokenStore = {
    create: async (record) => void records.set(`${record.botId}/${record.tokenId}`, record),
    get: async (botId, tokenId) => records.get(`${botId}/${tokenId}`) ?? null,
    list: async () => [...records.values()],
    revoke: async () => false,
    deleteAll: async () => 0,
  };
  const tokens = createTokenService({ secret: 's'.repeat(40), tokens: store, clock: { now: () => Date.now() } });

  it('answers any Authorization header with the token id, 401 or 403, never another error', async () => {
    const { token } = await tokens.mint('acme', {});
    const header = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.constant(`Bearer ${token}`),
      // One character changed inside a segment (the last of a segment may carry unused bits only).
      fc
        .nat({ max: token.length - 2 })
        .filter((at) => token[at] !== '.' && token[at + 1] !== '.')
        .map((at) => `Bearer ${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`),
      tokenChars.map((t) => `Bearer ${t}`),
    );
    await fc.assert(
      fc.asyncProperty(header, fc.constantFrom('acme', 'other'), async (authorization, botId) => {
        try {
          const { tokenId } = await tokens.verify(authorization, botId);
          expect([authorization, botId]).toEqual([`Bearer ${token}`, 'acme']);
          expect(typeof tokenId).toBe('string');
        } catch (error) {
          expect(error instanceof GiError && ['unauthorized', 'forbidden'].includes(error.code)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
