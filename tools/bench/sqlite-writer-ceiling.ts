// The SQLite writer's ceiling with HTTP out of the picture: invocations written per second on one SQLite
// file by 1, 2, ... processes, each doing what an embedded process does for a call through the real store
// (create, then the claim that follows it, then complete; group-committed), with CONCURRENCY calls in
// flight per process. Prints one JSON line per process count:
//   {"processes":N,"writesPerSecond":...,"cpuMicrosPerWrite":...,"seconds":...}
//   npx esbuild tools/bench/sqlite-writer-ceiling.ts --bundle --platform=node --packages=external --outfile=dist/bench/sqlite-writer-ceiling.js
//   node dist/bench/sqlite-writer-ceiling.js 1,2 [seconds]
// A "write" is one invocation through all three statements. CPU counts every thread of the processes.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '@gi/domain';
import type { Outcome } from '@gi/domain';
import { createSqliteStore } from '@gi/store-sqlite';
import { sampleInvocation } from '../../libs/store-sqlite/bench/sample-invocation';

const CONCURRENCY = Number(process.env.CONCURRENCY ?? 50);
const WARM_UP_MS = 1000;
const OUTCOME: Outcome = { status: 'Completed', responseBody: { orderId: 42, ok: true } } as Outcome;

interface ChildReport {
  writes: number;
  cpuMicros: number;
  seconds: number;
}


/** One process: CONCURRENCY loops of create, claim, complete until `until`. */
async function writer(path: string, seconds: number): Promise<ChildReport> {
  const store = createSqliteStore(path, systemClock, { claimsWhatItCreates: true });
  const owner = `bench-${process.pid}`;
  let writes = 0;
  let measuring = false;
  const one = async () => {
    const created = sampleInvocation(Date.now());
    await store.invocations.create(created);
    const claimed = await store.invocations.claim(created, owner, 30_000, Date.now());
    if (!claimed) throw new Error('claim refused');
    await store.invocations.complete(created, owner, OUTCOME, [], Date.now());
    if (measuring) writes++;
  };
  let stopAt = Date.now() + WARM_UP_MS;
  const loop = async () => {
    while (Date.now() < stopAt) await one();
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  measuring = true;
  const cpu = process.cpuUsage();
  const started = performance.now();
  stopAt = Date.now() + seconds * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  const elapsed = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await store.close();
  return { writes, cpuMicros: used.user + used.system, seconds: elapsed };
}

async function measure(processes: number, seconds: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gi-bench-writers-'));
  const path = join(dir, 'store.sqlite');
  try {
    // The schema first, once, as `gi up`'s primary does.
    await createSqliteStore(path, systemClock).close();
    const reports = await Promise.all(
      Array.from(
        { length: processes },
        () =>
          new Promise<ChildReport>((resolve, reject) => {
            const child = fork(__filename, ['--writer', path, String(seconds)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
            child.once('message', (report) => resolve(report as ChildReport));
            child.once('exit', (code) => code !== 0 && reject(new Error(`a writer exited with ${code}`)));
          }),
      ),
    );
    const writes = reports.reduce((sum, r) => sum + r.writes, 0);
    const cpu = reports.reduce((sum, r) => sum + r.cpuMicros, 0);
    const wall = Math.max(...reports.map((r) => r.seconds));
    console.log(JSON.stringify({ processes, writesPerSecond: Math.round(writes / wall), cpuMicrosPerWrite: Math.round(cpu / writes), seconds: Number(wall.toFixed(2)) }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  if (process.argv[2] === '--writer') {
    const report = await writer(process.argv[3], Number(process.argv[4]));
    process.send!(report, () => process.exit(0));
    return;
  }
  const counts = (process.argv[2] ?? '1,2').split(',').map(Number);
  const seconds = Number(process.argv[3] ?? 5);
  for (const processes of counts) await measure(processes, seconds);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
