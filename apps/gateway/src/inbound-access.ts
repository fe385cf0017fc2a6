import type { Context } from 'koa';
import { credentialHeadersOf, inboundRefusal, readInbound, SecretUnreadable } from '@gi/auth';
import type { InboundRequest, SecretVault, TokenService } from '@gi/auth';
import { inboundAuthOf, inboundSecretNames, unavailable } from '@gi/domain';
import type { Clock, Endpoint, IntegrationTarget, KeyedInboundAuth, Store, VerifiedInbound } from '@gi/domain';
import type { Access } from '@gi/http';
import { LogThrottle } from '@gi/observability';
import type { Logger } from '@gi/observability';

/**
 * What a webhook call was let in with: a token of the bot, or its integration's inbound scheme, whose
 * check of a signed body ends once the body is read (`inbound.checkBody`).
 */
export interface WebhookGrant {
  /** The token the call came with; null when its integration's inbound scheme verified it. */
  tokenId: string | null;
  /** The integration the path names, as resolved for the check; null when the bot has none of that id. */
  integration: IntegrationTarget | null;
  /** The scheme's check; null for a call made with a bot token. */
  inbound: InboundCheck | null;
  /** Headers left out of RequestHeaders besides Authorization, Cookie and the proxies' (the scheme's credential). */
  credentialHeaders: ReadonlySet<string> | undefined;
}

/**
 * The inbound check of one call: done at once for a scheme that signs nothing of the body (basic,
 * api-key), else on the body's bytes as received (`checkBody`, called by the body's reader); `verified`
 * then says what it found.
 */
export class InboundCheck {
  private result: VerifiedInbound | null = null;

  constructor(
    private readonly verify: (body: Buffer) => VerifiedInbound,
    readonly signsBody: boolean,
  ) {
    if (!signsBody) this.result = verify(Buffer.alloc(0));
  }

  readonly checkBody = (body: Buffer): void => {
    this.result = this.verify(body);
  };

  /** What was verified; throws when the body was never checked (a programming error, never a pass). */
  get verified(): VerifiedInbound {
    if (this.result === null) throw new Error('The inbound check of a signed body did not run.');
    return this.result;
  }
}

/** Key problems of an integration (a secret not set, or sealed under another key) are logged once per window. */
const KEY_PROBLEM_WINDOW_MS = 60_000;

export interface InboundAccessDeps {
  store: Pick<Store, 'catalog'>;
  tokens: Pick<TokenService, 'verify'>;
  /** The integrations' keys (connector secrets); without it a signed call finds no key. */
  secrets?: Pick<SecretVault, 'valuesOf'>;
  clock: Clock;
  logger: Logger;
  /** The service's public base URL (PUBLIC_BASE_URL): the URLs some schemes sign are rebuilt from it. */
  publicBaseUrl?: string;
}

/**
 * Who may call a webhook endpoint (`POST .../GenericIntegration`, `...FileTransfer`): the route's access,
 * decided once the route matched. The integration the path names says how (its `inboundAuth`): a token
 * of the bot in the path (bearer, the default, and any bot without such an integration: 401 without a
 * token, 403 with another bot's), or its scheme's credential, checked on the request line and headers
 * here and, for a signed body, on the body's bytes once read. A call of a scheme's integration that
 * presents only a bearer token is refused unless the integration allows both.
 */
export function webhookAccess(deps: InboundAccessDeps, endpoint: Endpoint): Access<WebhookGrant> {
  const keyProblems = new LogThrottle(KEY_PROBLEM_WINDOW_MS);
  return {
    caller: 'bot',
    grant: async (ctx) => {
      const { botId, integrationId } = ctx.params as Record<string, string>;
      const integration = await deps.store.catalog.resolveIntegration(botId, integrationId).catch(() => {
        throw unavailable('The integration could not be read because the store is not answering; nothing was accepted. Try again.');
      });
      const auth = inboundAuthOf(integration ?? {});
      if (auth.scheme === 'bearer') return bearerGrant(deps, ctx, integration, undefined);
      const inbound = readInbound(auth, inboundRequestOf(ctx, deps));
      if (inbound === 'bearer') return bearerGrant(deps, ctx, integration, credentialHeadersOf(auth));
      // A multipart body is streamed to the file store, never held whole: there is no single body to check.
      if (inbound.signsBody && endpoint === 'GenericIntegrationFileTransfer') {
        throw inboundRefusal('missing_signature', `Calls of this integration are verified by their ${auth.scheme} signature, which covers GenericIntegration calls only.`, auth.scheme, auth.allowBearer);
      }
      const keys = await keysOf(deps, keyProblems, botId, integrationId, auth);
      const check = new InboundCheck((body) => inbound.verify(keys, body), inbound.signsBody);
      return { tokenId: null, integration, inbound: check, credentialHeaders: credentialHeadersOf(auth) };
    },
  };
}

async function bearerGrant(deps: InboundAccessDeps, ctx: Context, integration: IntegrationTarget | null, credentialHeaders: ReadonlySet<string> | undefined): Promise<WebhookGrant> {
  const { tokenId } = await deps.tokens.verify(ctx.get('authorization') || undefined, (ctx.params as Record<string, string>).botId);
  return { tokenId, integration, inbound: null, credentialHeaders };
}

/** The request line and headers as the schemes read them, the URL they may sign rebuilt from the public base URL. */
function inboundRequestOf(ctx: Context, deps: InboundAccessDeps): InboundRequest {
  const { rawHeaders } = ctx.req;
  const query = ctx.querystring;
  return {
    method: ctx.method,
    publicUrl: deps.publicBaseUrl === undefined ? null : `${deps.publicBaseUrl.replace(/\/+$/, '')}${ctx.path}${query ? `?${query}` : ''}`,
    nowMs: deps.clock.now(),
    header(name) {
      // Node keeps every header it received (maxHeadersCount 0): one it does not hold was not sent.
      if (ctx.req.headers[name] === undefined) return [];
      const values: string[] = [];
      for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) values.push(rawHeaders[i + 1]);
      return values;
    },
  };
}

/**
 * The values of the integration's key secrets (its own, else the bot's), the current one first. One that
 * cannot be opened (no SECRETS_KEY, or another key) counts as no key: the call is refused 401
 * unknown-key, and the operator reads why in the log, with the secret's name and never its value.
 */
async function keysOf(deps: InboundAccessDeps, problems: LogThrottle, botId: string, integrationId: string, auth: KeyedInboundAuth): Promise<string[]> {
  const names = inboundSecretNames(auth);
  // One line per integration and window, however many calls a producer retries meanwhile.
  const logOnce = (level: 'warn' | 'error', reason: string) => {
    const admitted = problems.admit(`${botId}\u0000${integrationId}`);
    if (admitted.write) deps.logger[level]({ botId, integrationId, scheme: auth.scheme, secrets: names, reason, suppressed: admitted.suppressed }, 'inbound auth: no key to check calls against');
  };
  try {
    const keys = deps.secrets ? await deps.secrets.valuesOf(botId, integrationId, names) : [];
    if (keys.length === 0) logOnce('warn', 'none of the secrets holding the key is set');
    return keys;
  } catch (error) {
    if (error instanceof SecretUnreadable) {
      logOnce('error', error.message);
      return [];
    }
    throw unavailable('The integration\'s key could not be read because the store is not answering; nothing was accepted. Try again.');
  }
}
