/**
 * What the SQLite store spends on each step of an invocation's life (create, claim, complete), for a
 * typical small JSON webhook call, measured the way the embedded service uses it: 50 lives at once
 * (their writes share group commits), run after run, in a fresh database file.
 *
 *   npx esbuild libs/store-sqlite/bench/invocation-life.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/invocation-life.js && node dist/bench/invocation-life.js [lives]
 *
 * Prints the wall time per life of each step and the database file's size per invocation.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@gi/domain';
import { systemClock } from '@gi/domain';
import { createSqliteStore } from '../src/index';
import { sampleInvocation } from './sample-invocation';

const CONCURRENT = 50;


/** Runs `step` for every invocation, CONCURRENT at a time; the wall time per invocation (µs). */
async function timed<T>(items: T[], step: (item: T) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < items.length; i += CONCURRENT) await Promise.all(items.slice(i, i + CONCURRENT).map(step));
  return ((performance.now() - started) * 1000) / items.length;
}

async function round(lives: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-store-'));
  const store: Store = createSqliteStore(join(dir, 'store.db'), systemClock);
  try {
    const invocations = Array.from({ length: lives }, () => sampleInvocation(Date.now()));
    const create = await timed(invocations, (inv) => store.invocations.create(inv));
    const claim = await timed(invocations, (inv) => store.invocations.claim(inv, 'w1', 30_000, Date.now()));
    const logs = [{ at: Date.now(), level: 'info' as const, message: 'order 42' }];
    const complete = await timed(invocations, (inv) => store.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: { Status: 'Accepted', Message: 'order 42' } }, logs, Date.now()));
    const bytes = statSync(join(dir, 'store.db')).size + (statSync(join(dir, 'store.db-wal'), { throwIfNoEntry: false })?.size ?? 0);
    return { create, claim, complete, bytesPerInvocation: bytes / lives };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const lives = Number(process.argv[2] ?? 20_000);
  await round(2000); // warm-up
  const rounds: Array<Record<string, number>> = [];
  for (let i = 0; i < 5; i++) rounds.push(await round(lives));
  const median = (key: string) => rounds.map((r) => r[key]).sort((a, b) => a - b)[2];
  console.log(
    `per invocation, median of 5 rounds of ${lives}: create ${median('create').toFixed(1)} µs, claim ${median('claim').toFixed(1)} µs, complete ${median('complete').toFixed(1)} µs, file ${Math.round(median('bytesPerInvocation'))} bytes`,
  );
}

void main();
