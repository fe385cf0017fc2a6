import { createSecretKey, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { LruMap, unavailable } from '@gi/domain';
import type { Clock, TokenStore } from '@gi/domain';
import { AuthRefusal, bearerToken, REALM, unauthorized } from './bearer';

const ALGORITHM = 'HS256';
const ISSUER = 'generic-integration';
const AUDIENCE = 'webhook';
/** Signature checks remembered (per token string); producers send the same few tokens thousands of times a second. */
const VERIFIED_CACHE_SIZE = 10_000;
/** Short-lived tokens live at most this long; longer needs are served by permanent, revocable tokens. */
export const MAX_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

export interface MintedToken {
  token: string;
  tokenId: string;
  expiresAt: number | null;
}

export interface TokenService {
  mint(botId: string, options: { ttlSeconds?: number; label?: string }): Promise<MintedToken>;
  /** Verifies `Authorization: Bearer <jwt>` for `botId`: 401 for a bad token, 403 for another bot's. */
  verify(authorization: string | undefined, botId: string): Promise<{ tokenId: string }>;
}

/**
 * Bot-scoped bearer tokens: HS256 JWTs (algorithm pinned) with `sub` = bot id and `jti` = token id.
 * Every token must be in the registry and not revoked, so revocation takes effect at once; a
 * short-lived token must carry `exp`.
 */
export function createTokenService(deps: { secret: string; tokens: TokenStore; clock: Clock }): TokenService {
  const { tokens, clock } = deps;
  // A key object made once: given a string, jsonwebtoken would build (and first try to parse as a public key) one per call.
  const secret = createSecretKey(Buffer.from(deps.secret, 'utf8'));
  // Token string -> its verified claims. Only the signature, issuer and audience check is remembered:
  // expiry is checked on every call, and the registry (revocation) is always asked.
  const verified = new LruMap<string, jwt.JwtPayload>(VERIFIED_CACHE_SIZE);
  const verifyJwt = (token: string, nowSeconds: number): jwt.JwtPayload => {
    const known = verified.get(token);
    if (known) {
      if (typeof known.exp === 'number' && nowSeconds >= known.exp) throw new jwt.TokenExpiredError('jwt expired', new Date(known.exp * 1000));
      return known;
    }
    const claims = jwt.verify(token, secret, { algorithms: [ALGORITHM], issuer: ISSUER, audience: AUDIENCE, clockTimestamp: nowSeconds }) as jwt.JwtPayload;
    verified.set(token, claims);
    return claims;
  };

  return {
    async mint(botId, { ttlSeconds, label }) {
      const tokenId = randomUUID();
      const now = clock.now();
      const iat = Math.floor(now / 1000);
      const expiresAt = ttlSeconds === undefined ? null : (iat + ttlSeconds) * 1000;
      await tokens.create({ botId, tokenId, label: label ?? null, createdAt: now, expiresAt, revokedAt: null });
      const claims: jwt.JwtPayload = { sub: botId, jti: tokenId, iat, iss: ISSUER, aud: AUDIENCE };
      if (expiresAt !== null) claims.exp = expiresAt / 1000;
      return { token: jwt.sign(claims, secret, { algorithm: ALGORITHM }), tokenId, expiresAt };
    },

    async verify(authorization, botId) {
      const token = bearerToken(authorization);
      let claims: jwt.JwtPayload;
      try {
        claims = verifyJwt(token, Math.floor(clock.now() / 1000));
      } catch (error) {
        const expired = error instanceof jwt.TokenExpiredError;
        throw expired ? unauthorized('The token has expired.', 'expired') : unauthorized('The token is not valid.', 'invalid');
      }
      if (typeof claims.sub !== 'string' || typeof claims.jti !== 'string') throw unauthorized('The token is not valid.', 'invalid');
      const record = await tokens.get(claims.sub, claims.jti).catch(() => {
        // The registry is in the store: while the store is down nothing can be accepted, and callers retry.
        throw unavailable('The token could not be checked because the store is not answering; nothing was accepted. Try again.');
      });
      if (!record) throw unauthorized('The token is not valid.', 'invalid');
      if (record.revokedAt !== null) throw unauthorized('The token has been revoked.', 'revoked');
      if (record.expiresAt !== null && typeof claims.exp !== 'number') throw unauthorized('The token is not valid.', 'invalid');
      if (claims.sub !== botId) {
        throw new AuthRefusal('forbidden', 'Forbidden', 'The token belongs to another bot.', 'other_bot', {
          'WWW-Authenticate': `Bearer realm="${REALM}", error="insufficient_scope"`,
        });
      }
      return { tokenId: record.tokenId };
    },
  };
}
