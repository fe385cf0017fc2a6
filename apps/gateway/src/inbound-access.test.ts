import { Writable } from 'node:stream';
import type { Context } from 'koa';
import { SecretUnreadable } from '@gi/auth';
import { GiError } from '@gi/domain';
import type { InboundAuth, IntegrationTarget } from '@gi/domain';
import { createLogger } from '@gi/observability';
import { InboundCheck, webhookAccess } from './inbound-access';
import type { InboundAccessDeps, WebhookGrant } from './inbound-access';

const API_KEY: InboundAuth = { scheme: 'api-key', secret: 'CRM_KEY', header: 'X-API-Key' };

/** webhookAccess's deps over a catalog of one integration per id, a vault answering `keys` (or throwing them), and the log lines. */
function access(options: { inboundAuth?: InboundAuth; keys?: string[] | Error; noVault?: boolean; catalogDown?: boolean } = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text) lines.push(JSON.parse(text) as Record<string, unknown>);
      done();
    },
  });
  const asked: unknown[] = [];
  const deps: InboundAccessDeps = {
    store: {
      catalog: {
        resolveIntegration: async (_botId: string, integrationId: string) => {
          if (options.catalogDown) throw new Error('SQLITE_BUSY');
          return { integrationId, version: 1, entityName: 'Order', pool: 'default', callbackUrl: null, inboundAuth: options.inboundAuth ?? API_KEY } as IntegrationTarget;
        },
      },
    } as unknown as InboundAccessDeps['store'],
    tokens: { verify: async () => ({ tokenId: 'tok-1' }) } as unknown as InboundAccessDeps['tokens'],
    secrets: options.noVault
      ? undefined
      : {
          valuesOf: async (...args: unknown[]) => {
            asked.push(args);
            if (options.keys instanceof Error) throw options.keys;
            return options.keys ?? [];
          },
        },
    clock: { now: () => 0 },
    logger: createLogger('info', 'test', { destination }),
  };
  const grant = webhookAccess(deps, 'GenericIntegration').grant as (ctx: Context) => Promise<WebhookGrant>;
  /** A call of `integrationId` with these header lines. */
  const call = (integrationId: string, rawHeaders: string[]) => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < rawHeaders.length; i += 2) headers[rawHeaders[i].toLowerCase()] = rawHeaders[i + 1];
    const ctx = {
      params: { botId: 'acme', integrationId },
      method: 'POST',
      path: `/api/Platform/acme/Order/${integrationId}/GenericIntegration`,
      querystring: '',
      get: (name: string) => headers[name.toLowerCase()] ?? '',
      req: { rawHeaders, headers },
    } as unknown as Context;
    return grant(ctx);
  };
  return { call, lines, asked };
}

const refusal = (granting: Promise<unknown>) => granting.then(() => null, (error: unknown) => error as GiError);
const NO_KEY = 'inbound auth: no key to check calls against';

describe('webhookAccess', () => {
  it('lets in a call whose API key is one of the keys of its secret, checked on the headers alone', async () => {
    const { call, asked } = access({ keys: ['old-key', 'new-key'] });
    const grant = await call('crm', ['X-API-Key', 'old-key']);
    expect(grant).toMatchObject({ tokenId: null, integration: { integrationId: 'crm' } });
    expect(grant.inbound?.verified).toEqual({ scheme: 'api-key', deliveryId: null });
    expect([...(grant.credentialHeaders ?? [])]).toEqual(['x-api-key']);
    expect(asked).toEqual([['acme', 'crm', ['CRM_KEY']]]);
  });

  it('refuses a key sent on two header lines', async () => {
    const { call } = access({ keys: ['k'] });
    expect((await refusal(call('crm', ['X-API-Key', 'k', 'x-api-key', 'k'])))?.code).toBe('bad_signature');
  });

  it('answers 503 when the store cannot tell the integration', async () => {
    const refused = await refusal(access({ catalogDown: true }).call('crm', []));
    expect([refused?.code, refused?.detail]).toEqual(['unavailable', 'The integration could not be read because the store is not answering; nothing was accepted. Try again.']);
  });

  it('refuses an unset key and logs it once per integration, naming the secrets, however many calls come', async () => {
    const { call, lines } = access();
    for (const integrationId of ['crm', 'crm', 'crm', 'erp']) expect((await refusal(call(integrationId, ['X-API-Key', 'k'])))?.code).toBe('unknown_key');
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: NO_KEY, botId: 'acme', integrationId: 'crm', scheme: 'api-key', secrets: ['CRM_KEY'], reason: 'none of the secrets holding the key is set', suppressed: 0 }),
      expect.objectContaining({ level: 40, msg: NO_KEY, integrationId: 'erp' }),
    ]);
  });

  it('finds no key without a vault', async () => {
    const { call, lines } = access({ noVault: true });
    expect((await refusal(call('crm', ['X-API-Key', 'k'])))?.code).toBe('unknown_key');
    expect(lines).toEqual([expect.objectContaining({ level: 40, reason: 'none of the secrets holding the key is set' })]);
  });

  it('logs a key sealed under another SECRETS_KEY as an error, and refuses the call as without a key', async () => {
    const { call, lines } = access({ keys: new SecretUnreadable("The secret 'CRM_KEY' was sealed with another SECRETS_KEY.") });
    expect((await refusal(call('crm', ['X-API-Key', 'k'])))?.code).toBe('unknown_key');
    expect(lines).toEqual([expect.objectContaining({ level: 50, msg: NO_KEY, reason: "The secret 'CRM_KEY' was sealed with another SECRETS_KEY." })]);
  });

  it('answers 503 when the vault cannot be read', async () => {
    const refused = await refusal(access({ keys: new Error('SQLITE_BUSY') }).call('crm', ['X-API-Key', 'k']));
    expect([refused?.code, refused?.detail]).toEqual(['unavailable', "The integration's key could not be read because the store is not answering; nothing was accepted. Try again."]);
  });

  it("takes a bearer token of the bot where the integration allows it, leaving the scheme's header out of RequestHeaders", async () => {
    const { call } = access({ inboundAuth: { ...API_KEY, allowBearer: true } });
    const grant = await call('crm', ['Authorization', 'Bearer t']);
    expect([grant.tokenId, grant.inbound, [...(grant.credentialHeaders ?? [])]]).toEqual(['tok-1', null, ['x-api-key']]);
  });
});

describe('InboundCheck', () => {
  it('checks a scheme that signs nothing of the body at once, and a signed body only when it is read', () => {
    const seen: string[] = [];
    const verify = (body: Buffer) => (seen.push(body.toString()), { scheme: 'github' as const, deliveryId: body.toString() });
    expect(new InboundCheck(verify, false).verified).toEqual({ scheme: 'github', deliveryId: '' });
    const signed = new InboundCheck(verify, true);
    expect(() => signed.verified).toThrow('The inbound check of a signed body did not run.');
    signed.checkBody(Buffer.from('d-1'));
    expect([signed.verified, seen]).toEqual([{ scheme: 'github', deliveryId: 'd-1' }, ['', 'd-1']]);
  });
});
