import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTokenService } from '@gi/auth';
import type { TokenService } from '@gi/auth';
import { DEFAULT_CONNECTOR_LIMITS } from '@gi/domain';
import type { IntegrationSettings, Store } from '@gi/domain';
import { createSqliteStore } from '@gi/store-sqlite';
import { deleteBot, deleteIntegration } from '@gi/use-cases';
import { ManualClock } from '@gi/testing';

const SECRET = 'catalog-cache-test-secret-of-enough-length';
const SETTINGS: IntegrationSettings = {
  entityName: 'Order',
  code: 'return 1',
  pool: 'default',
  timeoutSeconds: 60,
  allowedHosts: [],
  limits: DEFAULT_CONNECTOR_LIMITS,
  callbackUrl: null,
};
const refusal = (reason: string) => expect.objectContaining({ code: 'unauthorized', reason });

/**
 * Two store instances on one SQLite file, as two processes of `gi up` have: each caches token records
 * and integration targets, and a change made through one is seen by the other's very next lookup.
 */
describe('SQLite catalog cache across connections to one file', () => {
  let dir: string;
  let clock: ManualClock;
  let writer: Store;
  let reader: Store;
  let minting: TokenService;
  let checking: TokenService;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gi-catalog-cache-'));
    clock = new ManualClock();
    writer = createSqliteStore(join(dir, 'store.db'), clock);
    reader = createSqliteStore(join(dir, 'store.db'), clock);
    minting = createTokenService({ secret: SECRET, tokens: writer.tokens, clock });
    checking = createTokenService({ secret: SECRET, tokens: reader.tokens, clock });
  });
  afterEach(async () => {
    await reader.close();
    await writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const deleteDeps = (store: Store) => ({
    store,
    clock,
    bus: { publishCancel: async () => undefined, publishCompletion: async () => undefined },
  });

  it('refuses a token revoked through the other connection at the next check', async () => {
    const { token, tokenId } = await minting.mint('acme', {});
    const authorization = `Bearer ${token}`;
    // Checked (and so cached) twice on the reader first.
    await expect(checking.verify(authorization, 'acme')).resolves.toEqual({ tokenId });
    await expect(checking.verify(authorization, 'acme')).resolves.toEqual({ tokenId });

    expect(await writer.tokens.revoke('acme', tokenId, clock.now())).toBe(true);

    await expect(checking.verify(authorization, 'acme')).rejects.toEqual(refusal('revoked'));
  });

  it('finds a token issued through the other connection after its id was looked up in vain', async () => {
    // The reader's cache holds the answer "no such token" before the token is issued.
    expect(await reader.tokens.get('acme', 't1')).toBeNull();
    await writer.tokens.create({ botId: 'acme', tokenId: 't1', label: null, createdAt: clock.now(), expiresAt: null, revokedAt: null });
    expect(await reader.tokens.get('acme', 't1')).toMatchObject({ tokenId: 't1', revokedAt: null });
  });

  it('resolves the version deployed through the other connection at the next call', async () => {
    await writer.catalog.deployIntegration('acme', 'ack', SETTINGS, clock.now());
    expect(await reader.catalog.resolveIntegration('acme', 'ack')).toMatchObject({ version: 1, pool: 'default' });
    expect(await reader.catalog.resolveIntegration('acme', 'ack')).toMatchObject({ version: 1 });

    await writer.catalog.deployIntegration('acme', 'ack', { ...SETTINGS, pool: 'fast' }, clock.now());

    expect(await reader.catalog.resolveIntegration('acme', 'ack')).toMatchObject({ version: 2, pool: 'fast' });
  });

  it('resolves nothing for an integration deleted through the other connection', async () => {
    await writer.catalog.deployIntegration('acme', 'ack', SETTINGS, clock.now());
    expect(await reader.catalog.resolveIntegration('acme', 'ack')).not.toBeNull();

    await deleteIntegration(deleteDeps(writer), 'acme', 'ack', false);

    expect(await reader.catalog.resolveIntegration('acme', 'ack')).toBeNull();
  });

  it('refuses the tokens of a bot deleted through the other connection, and resolves none of its integrations', async () => {
    await writer.catalog.deployIntegration('acme', 'ack', SETTINGS, clock.now());
    const { token } = await minting.mint('acme', {});
    await checking.verify(`Bearer ${token}`, 'acme');
    expect(await reader.catalog.resolveIntegration('acme', 'ack')).not.toBeNull();

    await deleteBot(deleteDeps(writer), 'acme', false);

    await expect(checking.verify(`Bearer ${token}`, 'acme')).rejects.toEqual(refusal('invalid'));
    expect(await reader.catalog.resolveIntegration('acme', 'ack')).toBeNull();
  });

  it('sees a revocation written by a plain SQL statement, outside any store', async () => {
    const { token, tokenId } = await minting.mint('acme', {});
    await checking.verify(`Bearer ${token}`, 'acme');

    const plain = new Database(join(dir, 'store.db'));
    try {
      plain.prepare('UPDATE tokens SET revoked_at = ? WHERE bot_id = ? AND token_id = ?').run(clock.now(), 'acme', tokenId);
    } finally {
      plain.close();
    }

    await expect(checking.verify(`Bearer ${token}`, 'acme')).rejects.toEqual(refusal('revoked'));
  });

  it('sees its own revocation at the next check', async () => {
    const { token, tokenId } = await minting.mint('acme', {});
    const own = createTokenService({ secret: SECRET, tokens: writer.tokens, clock });
    await own.verify(`Bearer ${token}`, 'acme');
    await writer.tokens.revoke('acme', tokenId, clock.now());
    await expect(own.verify(`Bearer ${token}`, 'acme')).rejects.toEqual(refusal('revoked'));
  });
});
