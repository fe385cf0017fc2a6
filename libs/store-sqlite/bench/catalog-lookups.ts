/**
 * Main-thread CPU of the catalog lookups every webhook call makes before anything is stored: the token
 * check (signature remembered, registry read) and the integration's resolution, on a real SQLite file.
 * CPU time (process.cpuUsage), not wall time, so a loaded machine changes the figure less.
 *
 *   npx esbuild libs/store-sqlite/bench/catalog-lookups.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/catalog-lookups.js && node dist/bench/catalog-lookups.js [pairs]
 *
 * (Bundled inside the checkout, so node_modules is found.) Prints the CPU per verify + resolve pair,
 * the median of 3 rounds after a warm-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The benchmark measures the token check as the gateway makes it, with this store under it.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createTokenService } from '@gi/auth';
import { DEFAULT_CONNECTOR_LIMITS, systemClock } from '@gi/domain';
import { createSqliteStore } from '../src/index';

const SECRET = 'catalog-lookups-bench-secret-0123456789';

async function main(): Promise<void> {
  const pairs = Number(process.argv[2] ?? 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-lookups-'));
  const store = createSqliteStore(join(dir, 'store.db'), systemClock);
  try {
    const tokens = createTokenService({ secret: SECRET, tokens: store.tokens, clock: systemClock });
    const settings = { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 60, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null };
    // A few bots, integrations and tokens, so the lookups are not of the only rows in their tables.
    const authorizations: string[] = [];
    for (let bot = 0; bot < 20; bot++) {
      for (let i = 0; i < 5; i++) await store.catalog.deployIntegration(`bot-${bot}`, `int-${i}`, settings, Date.now());
      for (let i = 0; i < 5; i++) authorizations.push(`Bearer ${(await tokens.mint(`bot-${bot}`, {})).token}`);
    }
    const authorization = authorizations[42];
    const botId = 'bot-8';
    const round = async (count: number) => {
      const started = process.cpuUsage();
      for (let i = 0; i < count; i++) {
        await tokens.verify(authorization, botId);
        if (!(await store.catalog.resolveIntegration(botId, 'int-2'))) throw new Error('integration not found');
      }
      const used = process.cpuUsage(started);
      return (used.user + used.system) / count;
    };
    await round(10_000);
    const rounds = [await round(pairs), await round(pairs), await round(pairs)].sort((a, b) => a - b);
    console.log(`verify + resolveIntegration: ${rounds[1].toFixed(2)} µs CPU per pair (median of 3 rounds of ${pairs}; ${rounds.map((r) => r.toFixed(2)).join(', ')})`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
