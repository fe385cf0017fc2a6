import { LruMap } from '@gi/domain';
import type { CatalogStore, IntegrationDefinition } from '@gi/domain';

/** Versions kept by one executor: far more than the integrations it runs in any busy minute. */
const KEPT_VERSIONS = 512;

/**
 * The integration versions an executor runs. A deployed version never changes, so each is read from the
 * store once and kept (least recently used goes first), not read again for every job.
 */
export class IntegrationVersions {
  private readonly kept: LruMap<string, IntegrationDefinition>;

  constructor(
    private readonly catalog: CatalogStore,
    capacity = KEPT_VERSIONS,
  ) {
    this.kept = new LruMap(capacity);
  }

  async get(botId: string, integrationId: string, version: number): Promise<IntegrationDefinition | null> {
    // Names hold neither '/' nor '@' (domain names.ts): the key is unambiguous.
    const key = `${botId}/${integrationId}@${version}`;
    const known = this.kept.get(key);
    if (known) return known;
    const found = await this.catalog.getIntegration(botId, integrationId, version);
    if (found) this.kept.set(key, found);
    return found;
  }
}
