import jwt from 'jsonwebtoken';
import type { GiError, TokenRecord, TokenStore } from '@gi/domain';
import { createTokenService } from './token.service';
import { verifyAdminBearer } from './bearer';

class MemoryTokens implements TokenStore {
  readonly records = new Map<string, TokenRecord>();
  async create(r: TokenRecord) {
    this.records.set(`${r.botId}/${r.tokenId}`, { ...r });
  }
  async get(botId: string, tokenId: string) {
    return this.records.get(`${botId}/${tokenId}`) ?? null;
  }
  async list(botId: string) {
    return [...this.records.values()].filter((r) => r.botId === botId);
  }
  async revoke(botId: string, tokenId: string, now: number) {
    const r = this.records.get(`${botId}/${tokenId}`);
    if (!r) return false;
    r.revokedAt = now;
    return true;
  }
  async deleteAll(botId: string) {
    const mine = [...this.records.keys()].filter((key) => key.startsWith(`${botId}/`));
    for (const key of mine) this.records.delete(key);
    return mine.length;
  }
}

const SECRET = 'a'.repeat(48);

async function failure(promise: Promise<unknown>): Promise<GiError> {
  try {
    await promise;
  } catch (error) {
    return error as GiError;
  }
  throw new Error('expected a failure');
}

describe('token service', () => {
  let now = Date.UTC(2026, 5, 1);
  const clock = { now: () => now };
  const tokens = new MemoryTokens();
  const service = createTokenService({ secret: SECRET, tokens, clock });
  const bearer = (t: string) => `Bearer ${t}`;

  it('accepts a permanent token of the bot', async () => {
    const minted = await service.mint('bot-a', { label: 'crm' });
    expect(minted.expiresAt).toBeNull();
    expect(await service.verify(bearer(minted.token), 'bot-a')).toEqual({ tokenId: minted.tokenId });
    expect(jwt.decode(minted.token)).not.toHaveProperty('exp');
  });

  it('accepts a short-lived token until it expires', async () => {
    const minted = await service.mint('bot-a', { ttlSeconds: 60 });
    await expect(service.verify(bearer(minted.token), 'bot-a')).resolves.toBeDefined();
    now += 61_000;
    const error = await failure(service.verify(bearer(minted.token), 'bot-a'));
    expect(error).toMatchObject({ code: 'unauthorized', detail: 'The token has expired.' });
    expect(error.headers['WWW-Authenticate']).toContain('error="invalid_token"');
  });

  it('refuses another bot\'s token with 403', async () => {
    const minted = await service.mint('bot-b', {});
    expect(await failure(service.verify(bearer(minted.token), 'bot-a'))).toMatchObject({ code: 'forbidden' });
  });

  it('refuses a token revoked after it was accepted (the registry is asked on every call)', async () => {
    const minted = await service.mint('bot-a', {});
    await expect(service.verify(bearer(minted.token), 'bot-a')).resolves.toEqual({ tokenId: minted.tokenId });
    await tokens.revoke('bot-a', minted.tokenId, now);
    expect(await failure(service.verify(bearer(minted.token), 'bot-a'))).toMatchObject({ code: 'unauthorized', detail: 'The token has been revoked.' });
  });

  it('refuses a token signed with another secret even when a token of the same claims was accepted', async () => {
    const minted = await service.mint('bot-a', {});
    await service.verify(bearer(minted.token), 'bot-a');
    const claims = jwt.decode(minted.token) as jwt.JwtPayload;
    const forged = jwt.sign(claims, 'another-secret-of-sufficient-length-0123', { algorithm: 'HS256' });
    expect(await failure(service.verify(bearer(forged), 'bot-a'))).toMatchObject({ code: 'unauthorized', detail: 'The token is not valid.' });
  });

  it('refuses a revoked token at once', async () => {
    const minted = await service.mint('bot-a', {});
    await tokens.revoke('bot-a', minted.tokenId, now);
    expect(await failure(service.verify(bearer(minted.token), 'bot-a'))).toMatchObject({ code: 'unauthorized', detail: 'The token has been revoked.' });
  });

  describe('attacks', () => {
    let valid: string;
    let claims: jwt.JwtPayload;
    beforeAll(async () => {
      valid = (await service.mint('bot-a', {})).token;
      claims = jwt.decode(valid) as jwt.JwtPayload;
    });
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

    it.each(['none', 'None', 'NONE', 'nOnE'])('refuses alg=%s', async (alg) => {
      const forged = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}.`;
      expect(await failure(service.verify(bearer(forged), 'bot-a'))).toMatchObject({ code: 'unauthorized' });
    });

    it('refuses a token signed with another key', async () => {
      const forged = jwt.sign(claims, 'b'.repeat(48), { algorithm: 'HS256' });
      expect(await failure(service.verify(bearer(forged), 'bot-a'))).toMatchObject({ code: 'unauthorized' });
    });

    it('refuses another HMAC algorithm even with the right key', async () => {
      const forged = jwt.sign(claims, SECRET, { algorithm: 'HS512' });
      expect(await failure(service.verify(bearer(forged), 'bot-a'))).toMatchObject({ code: 'unauthorized' });
    });

    it('refuses a tampered payload', async () => {
      const [header, , signature] = valid.split('.');
      const forged = `${header}.${b64({ ...claims, sub: 'bot-b' })}.${signature}`;
      expect(await failure(service.verify(bearer(forged), 'bot-b'))).toMatchObject({ code: 'unauthorized' });
    });

    it('refuses a correctly signed token that is not in the registry', async () => {
      const forged = jwt.sign({ ...claims, jti: 'unknown' }, SECRET, { algorithm: 'HS256' });
      expect(await failure(service.verify(bearer(forged), 'bot-a'))).toMatchObject({ code: 'unauthorized' });
    });

    it('refuses a short-lived token stripped of its exp', async () => {
      const short = await service.mint('bot-a', { ttlSeconds: 300 });
      const { exp: _exp, ...rest } = jwt.decode(short.token) as jwt.JwtPayload;
      const forged = jwt.sign(rest, SECRET, { algorithm: 'HS256' });
      expect(await failure(service.verify(bearer(forged), 'bot-a'))).toMatchObject({ code: 'unauthorized' });
    });

    it.each([undefined, ''])('asks for credentials without an error code when none were sent (%p)', async (header) => {
      const error = await failure(service.verify(header, 'bot-a'));
      expect(error.headers['WWW-Authenticate']).toBe('Bearer realm="generic-integration"');
    });

    it.each(['Basic abc', 'Bearer', 'Bearer a b', `Token ${'x'.repeat(10)}`, 'Bearer not.a.jwt'])('refuses the malformed header %p', async (header) => {
      const error = await failure(service.verify(header, 'bot-a'));
      expect(error).toMatchObject({ code: 'unauthorized' });
      expect(error.headers['WWW-Authenticate']).toContain('invalid_token');
    });
  });

  it('answers unavailable (503, retry) when the token registry cannot be read', async () => {
    const broken = new MemoryTokens();
    broken.get = async () => {
      throw new Error('connection refused');
    };
    const valid = (await service.mint('bot-a', {})).token;
    const error = await failure(createTokenService({ secret: SECRET, tokens: broken, clock }).verify(`Bearer ${valid}`, 'bot-a'));
    expect(error).toMatchObject({ code: 'unavailable', headers: { 'Retry-After': '5' } });
    expect(error.detail).not.toContain('connection refused');
  });

  it('checks the admin token', () => {
    expect(() => verifyAdminBearer('Bearer right-token-123', 'right-token-123')).not.toThrow();
    expect(() => verifyAdminBearer('Bearer wrong-token-123', 'right-token-123')).toThrow('Unauthorized');
  });
});
