// `npm run bench`: starts the services itself, warms up, runs each scenario with autocannon, prints one
// table with the targets of the benchmark issue and writes docs/benchmarks.md. Needs `npm run build`
// first (npm run bench does it) and, for the distributed scenarios, RabbitMQ at AMQP_URL (skipped with
// a note when it does not answer). BENCH_SECONDS sets the length of each measured run.
// The measuring is measure.mjs, the scenarios scenarios.mjs, the table, targets and doc report.mjs.
import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { brokerPid, brokerVersion, deleteTopology } from './broker.mjs';
import { describeMachine } from './machine.mjs';
import { AMQP_URL, dataDirs, DURATION, notes, rows, topologies } from './measure.mjs';
import { stopAll } from './processes.mjs';
import { closingNotes, printReport, writeBenchmarksDoc } from './report.mjs';
import {
  brokerScenario,
  ceilingScenario,
  distributedScenario,
  durabilityScenario,
  durableScenario,
  embeddedScenario,
  executorCores,
  processesScenario,
  sandboxOverhead,
  writerScenario,
} from './scenarios.mjs';

/** BENCH_ONLY=embedded,distributed runs only those scenarios (ceiling, embedded, durability, durable, processes, writer, distributed, broker, sandbox); docs/benchmarks.md is then left as it is. */
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',').map((name) => name.trim())) : null;
const selected = (name) => !ONLY || ONLY.has(name);
const failures = [];

/** Runs one group of scenarios; a failure is reported and the next group still runs. */
async function attempt(label, scenario) {
  if (interrupted) return;
  try {
    await scenario();
  } catch (error) {
    const cause = error.cause?.message ? ` (${error.cause.message})` : '';
    const why = `${label} failed: ${firstLines(error.message)}${cause}`;
    failures.push(why);
    console.error(why);
  } finally {
    await stopAll();
  }
}

/** A failed child's message carries its whole output; the first lines say why. */
const firstLines = (text, count = 6) => text.split('\n').filter((line) => line.trim()).slice(0, count).join('\n');

let cleaning = null;
/** Stops every process, deletes the broker objects and the temporary directories; once, however often asked. */
function cleanUp() {
  cleaning ??= (async () => {
    await stopAll();
    for (const prefix of topologies) {
      await deleteTopology(AMQP_URL, prefix).catch((error) => console.error(`could not delete the broker objects of ${prefix}: ${error.message}`));
    }
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    console.error(`${signal}: stopping the services and removing what the run created; docs/benchmarks.md is left as it was`);
    cleanUp().finally(() => process.exit(130));
  });
}

const isLocalHost = (host) => ['localhost', '127.0.0.1', '[::1]', hostname()].includes(host);

async function main() {
  if (!(DURATION > 0)) throw new Error(`BENCH_SECONDS must be a positive number of seconds, not ${process.env.BENCH_SECONDS}`);
  const broker = await brokerVersion(AMQP_URL);
  // Its CPU is read from /proc only when the URL names this host: a local broker process may be another one.
  const brokerProcess = broker && isLocalHost(new URL(AMQP_URL).hostname) ? brokerPid() : null;
  const pinning = executorCores();
  const pinningText = pinning.pinned
    ? 'Distributed executors are pinned with taskset (1 executor on core 1; 2 on cores 0 and 1), one sandbox thread each; everything else floats.'
    : 'taskset is missing or cannot pin to cores 0 and 1 here, so the distributed executors were not pinned (each still has one sandbox thread).';
  if (!pinning.pinned) console.log(`Note: ${pinningText}`);
  const machine = describeMachine({ broker, brokerLocal: brokerProcess !== null, pinning: pinningText });
  for (const [label, value] of machine) console.log(`${label}: ${value}`);

  try {
    if (selected('ceiling')) await attempt('ceiling', ceilingScenario);
    if (selected('embedded')) await attempt('embedded', embeddedScenario);
    if (selected('durability')) await attempt('durability', durabilityScenario);
    if (selected('durable')) await attempt('durable steps', durableScenario);
    if (selected('processes')) await attempt('embedded processes', processesScenario);
    if (selected('writer')) await attempt('SQLite writer ceiling', writerScenario);
    if (selected('distributed') && !broker) notes.push(`Distributed scenarios skipped: no RabbitMQ at ${AMQP_URL.replace(/\/\/[^@]*@/, '//')}.`);
    if (selected('distributed') && broker) {
      if (brokerProcess === null) notes.push('RabbitMQ runs elsewhere or its process is not visible here: its CPU is not counted.');
      await attempt('distributed', () => distributedScenario(brokerProcess, pinning));
    }
    if (selected('broker') && broker && brokerProcess !== null) await attempt('broker alone', () => brokerScenario(brokerProcess));
    else if (selected('broker')) notes.push('Broker-alone rows skipped: they need RabbitMQ running on this host, where its CPU can be read.');
    if (selected('sandbox')) await attempt('sandbox overhead', sandboxOverhead);
  } finally {
    await cleanUp();
  }
  if (interrupted) return;
  const closing = closingNotes(rows, notes, failures);
  printReport(rows, closing);
  if (ONLY) return console.log(`\nOnly ${[...ONLY].join(', ')} ran (BENCH_ONLY): docs/benchmarks.md is left as it was.`);
  writeBenchmarksDoc(machine, rows, closing);
  if (failures.length) process.exitCode = 1;
}

await main();
