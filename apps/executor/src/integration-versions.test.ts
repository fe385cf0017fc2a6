import { DEFAULT_CONNECTOR_LIMITS } from '@gi/domain';
import type { CatalogStore, IntegrationDefinition } from '@gi/domain';
import { IntegrationVersions } from './integration-versions';

/** A catalog that counts reads of versioned integrations. */
function countingCatalog(existing: number[]) {
  const reads: string[] = [];
  const catalog = {
    async getIntegration(botId: string, integrationId: string, version?: number): Promise<IntegrationDefinition | null> {
      reads.push(`${botId}/${integrationId}@${version}`);
      if (version === undefined || !existing.includes(version)) return null;
      return { botId, integrationId, version, entityName: 'Order', code: `v${version}`, pool: 'default', timeoutSeconds: 5, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null, deployedAt: 0 };
    },
  } as unknown as CatalogStore;
  return { catalog, reads };
}

describe('IntegrationVersions', () => {
  it('reads each deployed version from the store once', async () => {
    const { catalog, reads } = countingCatalog([1, 2]);
    const versions = new IntegrationVersions(catalog);
    expect((await versions.get('bot-a', 'ack', 1))?.code).toBe('v1');
    expect((await versions.get('bot-a', 'ack', 1))?.code).toBe('v1');
    expect((await versions.get('bot-a', 'ack', 2))?.code).toBe('v2');
    expect((await versions.get('bot-b', 'ack', 1))?.botId).toBe('bot-b');
    expect(reads).toEqual(['bot-a/ack@1', 'bot-a/ack@2', 'bot-b/ack@1']);
  });

  it('asks again for a version it did not find', async () => {
    const { catalog, reads } = countingCatalog([]);
    const versions = new IntegrationVersions(catalog);
    expect(await versions.get('bot-a', 'ack', 3)).toBeNull();
    expect(await versions.get('bot-a', 'ack', 3)).toBeNull();
    expect(reads).toHaveLength(2);
  });

  it('keeps at most its capacity, dropping the least recently used', async () => {
    const { catalog, reads } = countingCatalog([1, 2, 3]);
    const versions = new IntegrationVersions(catalog, 2);
    await versions.get('bot-a', 'ack', 1);
    await versions.get('bot-a', 'ack', 2);
    await versions.get('bot-a', 'ack', 1);
    await versions.get('bot-a', 'ack', 3);
    reads.length = 0;
    await versions.get('bot-a', 'ack', 1);
    await versions.get('bot-a', 'ack', 2);
    expect(reads).toEqual(['bot-a/ack@2']);
  });
});
