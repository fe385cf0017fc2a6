import { GiError, notFound, UNFINISHED_STATUSES } from '@gi/domain';
import type { FileStore, InvocationRef, Store } from '@gi/domain';
import { cancelInvocation } from './cancel-invocation';
import type { CancelDeps } from './cancel-invocation';

export interface DeleteDeps extends Omit<CancelDeps, 'invocations'> {
  store: Pick<Store, 'catalog' | 'invocations' | 'tokens' | 'secrets'>;
  /** The uploaded files; a deleted bot's go with it. */
  files?: Pick<FileStore, 'deleteBot'>;
}

/** What a deletion did: the invocations it cancelled (only when forced). */
export interface Deleted {
  cancelled: number;
}

/** How many unfinished invocations are read (and, when forced, cancelled) at a time. */
const PAGE = 100;
/**
 * Rounds of cancelling before a forced deletion goes ahead anyway: calls that keep arriving meanwhile
 * cannot hold it up for ever (once it is deleted they are refused, and one accepted just before fails).
 */
const MAX_ROUNDS = 50;

async function unfinished(deps: DeleteDeps, botId: string, integrationId: string | undefined): Promise<InvocationRef[]> {
  const pages = await Promise.all(UNFINISHED_STATUSES.map((status) => deps.store.invocations.list(botId, { status, integrationId, limit: PAGE })));
  return pages.flat().map((summary) => ({ botId, id: summary.id }));
}

/**
 * Refuses (409 `in-use`) while invocations of what is deleted are unfinished (Queued, Running, or Waiting
 * in a durable sleep or event wait: they resume on the version they were accepted for); when forced,
 * cancels them first (as a cancellation through the control API), page by page until none is left.
 */
async function settleInFlight(deps: DeleteDeps, botId: string, integrationId: string | undefined, what: string, force: boolean): Promise<number> {
  let cancelled = 0;
  for (let round = 0, refs = await unfinished(deps, botId, integrationId); refs.length > 0 && round < MAX_ROUNDS; round++, refs = await unfinished(deps, botId, integrationId)) {
    if (!force) {
      throw new GiError('in_use', 'In use', `${what} has unfinished invocations (Queued, Running or Waiting); wait for them to finish, or delete with force=true to cancel them.`, {
        extensions: { inFlight: refs.length === UNFINISHED_STATUSES.length * PAGE ? `${refs.length}+` : refs.length },
      });
    }
    for (const ref of refs) {
      // One that finished meanwhile (409) is no longer in flight either.
      await cancelInvocation({ ...deps, invocations: deps.store.invocations }, ref, 'control-api').catch((error: unknown) => {
        if (!(error instanceof GiError && error.code === 'already_finished')) throw error;
      });
      cancelled++;
    }
  }
  return cancelled;
}

/** Deletes every version of an integration and its own secrets; its stored invocations stay until they expire. */
export async function deleteIntegration(deps: DeleteDeps, botId: string, integrationId: string, force: boolean): Promise<Deleted> {
  if (!(await deps.store.catalog.resolveIntegration(botId, integrationId))) throw notFound(`No integration '${integrationId}' for bot '${botId}'.`);
  const cancelled = await settleInFlight(deps, botId, integrationId, `Integration '${integrationId}' of bot '${botId}'`, force);
  await deps.store.catalog.deleteIntegration(botId, integrationId);
  await deps.store.secrets.deleteAll(botId, integrationId);
  return { cancelled };
}

/** Deletes an entity no integration uses (409 naming those that do: delete or redeploy them first). */
export async function deleteEntity(deps: DeleteDeps, botId: string, entityName: string): Promise<void> {
  if (!(await deps.store.catalog.getEntity(botId, entityName))) throw notFound(`No entity '${entityName}' for bot '${botId}'.`);
  const users = (await deps.store.catalog.listIntegrations(botId)).filter((i) => i.entityName === entityName).map((i) => i.integrationId);
  if (users.length > 0) {
    throw new GiError('in_use', 'In use', `Entity '${entityName}' is used by integration(s) ${users.map((u) => `'${u}'`).join(', ')}; delete them or deploy them with another entity first.`, {
      extensions: { integrations: users },
    });
  }
  await deps.store.catalog.deleteEntity(botId, entityName);
}

/**
 * Deletes a whole bot: entities, integrations, quotas, callback signing secrets, tokens (they stop
 * authenticating at once), connector secrets, and its invocations, Idempotency-Keys and files.
 */
export async function deleteBot(deps: DeleteDeps, botId: string, force: boolean): Promise<Deleted> {
  if (!(await deps.store.catalog.listBots()).includes(botId)) throw notFound(`No bot '${botId}'.`);
  const cancelled = await settleInFlight(deps, botId, undefined, `Bot '${botId}'`, force);
  // Tokens first: no new call is accepted while the rest goes.
  await deps.store.tokens.deleteAll(botId);
  // Its files next: on a full disk, the space they free lets the store's deletions that follow be written.
  await deps.files?.deleteBot(botId);
  await deps.store.catalog.deleteBot(botId);
  await deps.store.secrets.deleteAll(botId);
  // Its invocations and Idempotency-Keys go too: a bot created again with this id starts with none of
  // them (no poll, key or replay reaches the old tenant's data).
  await deps.store.invocations.deleteBot(botId);
  return { cancelled };
}
