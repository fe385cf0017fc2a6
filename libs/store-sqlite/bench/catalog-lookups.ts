/**
 * Main-thread CPU of the catalog lookups every webhook call makes before anything is stored: the token
 * check (signature remembered, registry read) and the integration's resolution, on a real SQLite file.
 * CPU time (process.cpuUsage), not wall time, so a loaded machine changes the figure less.
 *
 *   npx esbuild libs/store-sqlite/bench/catalog-lookups.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/catalog-lookups.js && node dist/bench/catalog-lookups.js [pairs]
 *
 * (Bundled inside the checkout, so node_modules is found.) Prints the CPU per verify + resolve pair,
 * the median of 3 rounds after a warm-up. With `--foreign-writes`, another process commits small
 * writes to the file all along (none to the catalog), as the other processes of `gi up --processes N`
 * do: each of its commits makes this connection read the pages it needs again.
 */
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The benchmark measures the token check as the gateway makes it, with this store under it.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createTokenService } from '@gi/auth';
import { DEFAULT_CONNECTOR_LIMITS, systemClock } from '@gi/domain';
import { createSqliteStore } from '../src/index';

const SECRET = 'catalog-lookups-bench-secret-0123456789';

/** Another process committing one small row at a time into a table of its own, until killed. */
const WRITER = `
const Database = require(process.argv[1]);
const db = new Database(process.argv[2]);
db.pragma('busy_timeout = 5000');
db.exec('CREATE TABLE IF NOT EXISTS bench_foreign_writes (n INTEGER)');
const insert = db.prepare('INSERT INTO bench_foreign_writes (n) VALUES (?)');
let n = 0;
const write = () => { insert.run(n++); setImmediate(write); };
write();
`;

async function main(): Promise<void> {
  const pairs = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 100_000);
  const foreignWrites = process.argv.includes('--foreign-writes');
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-lookups-'));
  const store = createSqliteStore(join(dir, 'store.db'), systemClock);
  const writer = foreignWrites ? spawn(process.execPath, ['-e', WRITER, require.resolve('better-sqlite3'), join(dir, 'store.db')], { stdio: 'inherit' }) : null;
  // The other process's commits so far (the rows it wrote), read on a connection of its own.
  const foreignCommits = () => {
    const db = new Database(join(dir, 'store.db'), { readonly: true });
    try {
      return (db.prepare("SELECT name FROM sqlite_master WHERE name = 'bench_foreign_writes'").get() ? db.prepare('SELECT COUNT(*) FROM bench_foreign_writes').pluck().get() : 0) as number;
    } finally {
      db.close();
    }
  };
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
    const started = performance.now();
    const commitsBefore = foreignWrites ? foreignCommits() : 0;
    const rounds = [await round(pairs), await round(pairs), await round(pairs)].sort((a, b) => a - b);
    const commitsPerSecond = foreignWrites ? `; another process committing ${Math.round((foreignCommits() - commitsBefore) / ((performance.now() - started) / 1000))} times a second` : '';
    console.log(`verify + resolveIntegration: ${rounds[1].toFixed(2)} µs CPU per pair (median of 3 rounds of ${pairs}; ${rounds.map((r) => r.toFixed(2)).join(', ')}${commitsPerSecond})`);
  } finally {
    writer?.kill();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
