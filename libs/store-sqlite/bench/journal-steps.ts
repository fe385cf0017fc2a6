/**
 * What the SQLite store spends on the journal of durable runs, on a real file, measured as the
 * executor uses it: `record` of one finished step (a small JSON result), by one run after another
 * (each step waits for the one before, as `await Context.Step(...)` does) and by 50 runs at once (their
 * steps share group commits); and `read` of a journal of 10,000 entries, as a run resumed after a
 * suspension or a crash reads it before it replays.
 *
 *   npx esbuild libs/store-sqlite/bench/journal-steps.ts --bundle --platform=node --packages=external \
 *     --outfile=dist/bench/journal-steps.js && node dist/bench/journal-steps.js [steps]
 *
 * (Bundled inside the checkout, so node_modules is found.) Prints the process's CPU per step
 * (process.cpuUsage, the WAL checkpointer's thread included: what the service pays) and the wall time,
 * the median of 5 rounds after a warm-up. Beside them, measured the same way in the same rounds, the
 * CPU of a plain invocation's whole life in the store (create, claim, complete; 50 at once): a yardstick
 * that moves with the machine's load as the figures do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvocationRef, Store } from '@gi/domain';
import { DEFAULT_JOURNAL_LIMITS, systemClock } from '@gi/domain';
import { createSqliteStore } from '../src/index';
import { sampleInvocation } from './sample-invocation';

const RUNS_AT_ONCE = 50;
const JOURNAL = 10_000;
const RESULT = JSON.stringify({ messageId: 'msg_0123456789abcdef', status: 'queued', to: '+15550100042' });

interface Cost {
  cpuUs: number;
  wallUs: number;
}

/** CPU (user + system, this process) and wall time of `work`, per item. */
async function measured(items: number, work: () => Promise<void>): Promise<Cost> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const spent = process.cpuUsage(cpu);
  return { cpuUs: (spent.user + spent.system) / items, wallUs: ((performance.now() - started) * 1000) / items };
}

/** A running invocation of `store`, claimed by 'w1': its lease is attempt 1. */
async function claimed(store: Store): Promise<InvocationRef> {
  const inv = sampleInvocation(Date.now());
  await store.invocations.create(inv);
  await store.invocations.claim(inv, 'w1', 600_000, Date.now());
  return { botId: inv.botId, id: inv.id };
}

/** Steps 1..count of one run, each recorded once the one before is durable. */
async function steps(store: Store, ref: InvocationRef, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    const at = Date.now();
    await store.journal.record(ref, { owner: 'w1', attempt: 1 }, { name: 'send', occurrence: i, attempts: 1, startedAt: at, status: 'done', resultJson: RESULT, finishedAt: at }, DEFAULT_JOURNAL_LIMITS);
  }
}

async function round(count: number): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-journal-'));
  const store = createSqliteStore(join(dir, 'store.db'), systemClock);
  try {
    const one = await claimed(store);
    const sequential = await measured(count, () => steps(store, one, 1, count));
    const runs = await Promise.all(Array.from({ length: RUNS_AT_ONCE }, () => claimed(store)));
    const perRun = Math.ceil(count / RUNS_AT_ONCE);
    const concurrent = await measured(perRun * RUNS_AT_ONCE, async () => void (await Promise.all(runs.map((ref) => steps(store, ref, 1, perRun)))));
    const lives = Array.from({ length: perRun * RUNS_AT_ONCE }, () => sampleInvocation(Date.now()));
    const outcome = { status: 'Completed' as const, responseBody: { Status: 'Accepted' } };
    const life = await measured(lives.length, async () => {
      for (let i = 0; i < lives.length; i += RUNS_AT_ONCE) {
        await Promise.all(
          lives.slice(i, i + RUNS_AT_ONCE).map(async (inv) => {
            await store.invocations.create(inv);
            await store.invocations.claim(inv, 'w1', 30_000, Date.now());
            await store.invocations.complete(inv, 'w1', outcome, [], Date.now());
          }),
        );
      }
    });
    const long = await claimed(store);
    await steps(store, long, 1, JOURNAL);
    let entries = 0;
    const read = await measured(1, async () => void (entries = (await store.journal.read(long)).length));
    if (entries !== JOURNAL) throw new Error(`read ${entries} entries, expected ${JOURNAL}`);
    return { lifeCpu: life.cpuUs, seqCpu: sequential.cpuUs, seqWall: sequential.wallUs, conCpu: concurrent.cpuUs, conWall: concurrent.wallUs, readCpuMs: read.cpuUs / 1000, readWallMs: read.wallUs / 1000 };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 20_000);
  await round(2000); // warm-up
  const rounds: Array<Record<string, number>> = [];
  for (let i = 0; i < 5; i++) rounds.push(await round(count));
  const median = (key: string) => rounds.map((r) => r[key]).sort((a, b) => a - b)[2].toFixed(1);
  console.log(`record, one step after another (median of 5 rounds of ${count}): ${median('seqCpu')} µs CPU, ${median('seqWall')} µs wall per step`);
  console.log(`record, ${RUNS_AT_ONCE} runs at once: ${median('conCpu')} µs CPU, ${median('conWall')} µs wall per step`);
  console.log(`yardstick: a plain invocation's life (create, claim, complete; ${RUNS_AT_ONCE} at once): ${median('lifeCpu')} µs CPU`);
  console.log(`read of a ${JOURNAL.toLocaleString('en')}-entry journal: ${median('readCpuMs')} ms CPU, ${median('readWallMs')} ms wall`);
}

void main();
