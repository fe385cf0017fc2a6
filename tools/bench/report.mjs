// The report of `npm run bench` (run.mjs): the run's rows as the printed table, the targets of the issue
// with met / not met, the closing notes, and docs/benchmarks.md with how each row was measured.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IN_FLIGHT } from './broker-costs.mjs';
import { CORES } from './machine.mjs';
import { BODY, DEFAULT_SECONDS, DRAIN_SETTLE_MS, DURATION, EXECUTOR_CONCURRENCY, kindsText, OUTSIDE_LOAD_NOTICE, ROOT, SAMPLE_MS, WARM_UP_SECONDS } from './measure.mjs';
import { BROKER_OPERATIONS, LARGE_BODY, POLL_SAMPLES, REPLAYED_STEPS, STEPS_PER_CALL } from './scenarios.mjs';

const cell = (value, unit = '') => (value === null || value === undefined || Number.isNaN(value) ? '' : `${value}${unit}`);
const percent = (ratio) => `${Math.round(ratio * 100)}%`;
/** The forwarding row's req/s before the work on forwarding (docs/benchmarks.md, the run of that day): its target is 3x this. */
const FORWARD_RPS_BEFORE = 989;
/** The heading of the hand-written part of docs/benchmarks.md that a run keeps (see `markdown`). */
const KEPT_HEADING = '## Before and after';

/** The row's req/s as a share of its ceiling's (the same work without store or sandbox), and its CPU per request as a multiple of the ceiling's. */
function ratioCell(row, rowsById) {
  if (row.isCeiling) return 'ceiling';
  const ceiling = row.against && rowsById.get(`ceiling-${row.against}`);
  if (!ceiling?.rps || !row.rps) return '';
  const cpu = row.cpu && ceiling.cpu ? `, ${(row.cpu / ceiling.cpu).toFixed(1)}x CPU` : '';
  return `${percent(row.rps / ceiling.rps)} of ${row.against}${cpu}`;
}

export function table(rows) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return [
    '| Scenario | req/s | vs ceiling | p50 | p99 | errors | CPU per request | broker CPU per request | RSS | outside load |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${cell(r.rps)} | ${ratioCell(r, byId)} | ${cell(r.p50, ' ms')} | ${cell(r.p99, ' ms')} | ${cell(r.errors)} | ` +
        `${cell(r.cpu, ' µs')} | ${cell(r.brokerCpu, ' µs')} | ${cell(r.rss, ' MB')} | ${cell(r.outside?.toFixed(2), ' cores')} |`,
    ),
  ].join('\n');
}

/** Each target of the issue with the figure this run measured and whether it was met. */
export function targets(rows, outsideNotice) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const sync = byId.get('embedded-sync-c50');
  const ceiling = byId.get('ceiling-c=50');
  const wake = byId.get('poll-wake');
  const one1 = byId.get('embedded-sync-sequential');
  const accept = byId.get('distributed-accept');
  const [one, two] = [byId.get('distributed-drain-1'), byId.get('distributed-drain-2')];
  // A row that answered no call (no CPU per call) is not measured.
  const check = (target, measuredRows, measured, ok) => ({ target, measuredRows, ...(measuredRows.every((row) => row && row.rps !== 0) ? { measured: measured(), result: ok() ? 'met' : 'not met' } : {}) });
  const step = byId.get('durable-step-cpu');
  const [forward, largeBody, unread, smallBody] = ['embedded-sync-fetch-c50', 'embedded-sync-large-body-c50', 'embedded-sync-large-body-unread-c50', 'embedded-sync-c50'].map((id) => byId.get(id));
  const replay = byId.get('durable-replay');
  const list = [
    { target: "Embedded sync, c=50: >= 40% of the ceiling's req/s", measuredRows: [sync, ceiling], ...shareVerdict(sync, ceiling, 0.4) },
    { target: 'Embedded sync, c=50: p99 <= 25 ms', measuredRows: [sync], ...tailVerdict(sync, 50, 25) },
    check('Embedded sync, one caller: p50 <= 0.6 ms', [one1], () => `${one1.p50} ms`, () => one1.p50 <= 0.6),
    check('Poll wake latency: p99 <= 20 ms', [wake], () => `${wake.p99} ms`, () => wake.p99 <= 20),
    check('Forwarding with fetch to a loopback API: <= 400 µs of service CPU per call', [forward], () => `${forward.cpu} µs`, () => forward.cpu !== null && forward.cpu <= 400),
    check(`Forwarding with fetch, c=50: >= 3x the ${FORWARD_RPS_BEFORE} req/s of the run before`, [forward], () => `${forward.rps} req/s (${(forward.rps / FORWARD_RPS_BEFORE).toFixed(1)}x)`, () => forward.rps >= 3 * FORWARD_RPS_BEFORE),
    check('About 90 KB of JSON body, a connector reading one field: <= 1,400 µs of service CPU per call', [largeBody], () => `${largeBody.cpu} µs`, () => largeBody.cpu !== null && largeBody.cpu <= 1400),
    check('The same body, a connector that never reads it: at most 2x the CPU of a small body', [unread, smallBody], () => `${unread.cpu} µs (${(unread.cpu / smallBody.cpu).toFixed(1)}x)`, () => unread.cpu <= 2 * smallBody.cpu),
    check('Trivial transform, c=50: <= 120 µs of service CPU per call', [smallBody], () => `${smallBody.cpu} µs`, () => smallBody.cpu !== null && smallBody.cpu <= 120),
    check('One caller at a time: mean <= 0.4 ms', [one1], () => `${one1.mean} ms`, () => one1.mean <= 0.4),
    check('Durable step on SQLite: <= 30 µs of service CPU per step', [step], () => `${step.cpu} µs`, () => step.cpu !== null && step.cpu <= 30),
    check('Durable replay of 10,000 finished steps: < 1 s', [replay], () => `${replay.p50} ms`, () => replay.p50 < 1000),
    check('Distributed async accept (publisher confirms): >= 3,000 req/s', [accept], () => `${accept.rps} req/s`, () => accept.rps >= 3000),
    { target: '2 executors >= 1.7x one on completion throughput (broker not the limit)', measuredRows: [one, two], ...scalingVerdict(one, two) },
    {
      target: 'Embedded sync, c=50: --processes 2 >= 1.7x the req/s of --processes 1, or at the SQLite writer ceiling',
      measuredRows: [byId.get('embedded-processes-1'), byId.get('embedded-processes-2')],
      ...processesVerdict(byId.get('embedded-processes-1'), byId.get('embedded-processes-2'), byId.get('sqlite-writer-2')),
    },
  ];
  const disturbance = (measuredRows) => {
    const outside = Math.max(...measuredRows.map((r) => r?.outside ?? 0));
    return outside > outsideNotice ? `; other work took ${outside.toFixed(2)} cores meanwhile` : '';
  };
  return [
    '| Target | Measured | Verdict |',
    '|---|---:|---|',
    ...list.map((t) => `| ${t.target} | ${t.measured ?? 'not measured'} | ${t.result ?? 'not measured'}${disturbance(t.measuredRows)} |`),
  ].join('\n');
}

/**
 * Whether the row reached `share` of the ceiling's req/s, and if not, the CPU budget that share leaves:
 * at that rate the machine's cores, less what the load generator takes per request, allow so many
 * microseconds of service CPU per request, against what the service spent.
 */
function shareVerdict(row, ceiling, share) {
  if (!row?.rps || !ceiling?.rps) return {};
  const measured = percent(row.rps / ceiling.rps);
  if (row.rps >= share * ceiling.rps) return { measured, result: 'met' };
  const rate = share * ceiling.rps;
  const budget = Math.round((CORES * 1e6 - rate * (row.loadCpu ?? 0)) / rate);
  return {
    measured,
    result:
      `not met; CPU-bound: at ${Math.round(rate)} req/s these ${CORES} cores leave ${budget} µs of CPU per request once the load generator ` +
      `takes its ${row.loadCpu} µs; the service spent ${row.cpu} µs (the ceiling ${ceiling.cpu} µs, with no store and no sandbox)`,
  };
}

/**
 * Whether the row's p99 stayed within `limitMs`. With `connections` callers each waiting for its answer
 * before the next call, the mean latency is connections / req/s: a p99 over the limit follows from the
 * throughput when that mean alone is near it.
 */
function tailVerdict(row, connections, limitMs) {
  if (!row?.rps) return {};
  const measured = `${row.p99} ms`;
  if (row.p99 <= limitMs) return { measured, result: 'met' };
  const meanMs = (connections * 1000) / row.rps;
  return { measured, result: `not met; ${connections} callers at ${row.rps} req/s wait ${meanMs.toFixed(1)} ms on average (p50 ${row.p50} ms): the tail follows the throughput` };
}

/** A machine this busy (share of its cores) during a drain had no core left to give the executors. */
const SATURATED = 0.9;

/**
 * Whether two executors reached 1.7 times one's completions, and if not, what held them back. Pinned to
 * the two cores, they share them with RabbitMQ, the gateway and control: when the cores were full and
 * RabbitMQ took more than the executors lacked for 1.7x (at their CPU per job), the broker was the limit
 * and the target's condition does not hold.
 */
function scalingVerdict(one, two) {
  if (!one?.rps || !two?.rps) return {};
  const factor = two.rps / one.rps;
  const measured = `${factor.toFixed(2)}x`;
  if (factor >= 1.7) return { measured, result: 'met' };
  const { total, broker, others, bench, outside, runners } = two.cores;
  const perJob = (row) => (row.cores.runners * 1e6) / row.rps;
  const lacking = (1.7 * one.rps * perJob(two)) / 1e6 - runners;
  const busy = runners + broker + others + bench + outside;
  const facts =
    `${busy.toFixed(2)} of ${total} cores busy, RabbitMQ ${broker.toFixed(2)}; the executors used ${runners.toFixed(2)} ` +
    `(${one.cores.runners.toFixed(2)} alone) and lacked ${lacking.toFixed(2)} for 1.7x, at ${Math.round(perJob(two))} µs of executor CPU per job (${Math.round(perJob(one))} alone)`;
  if (busy < SATURATED * total) return { measured, result: `not met; not CPU-bound: ${facts}` };
  if (broker >= lacking) return { measured, result: `not met; broker-bound, the cores were full: ${facts}` };
  return { measured, result: `not met; the cores were full: ${facts}` };
}

/**
 * Whether 2 embedded processes answered 1.7x the calls of one (or reached what SQLite writes from 2
 * processes), and if not the CPU each call took: on cores shared with the load generator, more processes
 * cannot add CPU, so the CPU per call says whether the processes themselves scale.
 */
function processesVerdict(one, two, ceiling) {
  if (!one?.rps || !two?.rps) return {};
  const factor = two.rps / one.rps;
  const measured = `${factor.toFixed(2)}x (${one.rps} -> ${two.rps} req/s)`;
  if (factor >= 1.7 || (ceiling?.rps && two.rps >= 0.9 * ceiling.rps)) return { measured, result: 'met' };
  const bound = CORES * 1e6 / (one.cpu + (one.loadCpu ?? 0));
  return {
    measured,
    result:
      `not met; ${CORES} cores shared with the load generator: CPU per call ${one.cpu} µs with 1 process, ${two.cpu} µs with 2 (all processes), ` +
      `the load generator ${one.loadCpu} µs, so these cores allow about ${Math.round(bound)} req/s whatever the processes${ceiling?.rps ? `; the writer's ceiling from 2 processes is ${ceiling.rps}/s` : ''}`,
  };
}

/** `kept`: the hand-written sections of the file this run replaces (from KEPT_HEADING on), carried over. */
export function markdown({ method, machine, rows, notes, reproduce, outsideNotice, kept = '' }) {
  return `# Benchmarks

Written by \`npm run bench\` (tools/bench/run.mjs); do not edit by hand.

## Machine

${machine.map(([label, value]) => `- ${label}: ${value}`).join('\n')}

## Method

${method}

## Results

${table(rows)}

## Targets

${targets(rows, outsideNotice)}

## Notes

${notes.join('\n\n')}

## Reproduce

${reproduce}
${kept ? `\n${kept.trimEnd()}\n` : ''}`;
}

/**
 * The notes of the run as printed and written: its failures first, then whether work outside it disturbed
 * its rows, the notes its scenarios left, and the CPU of rows that span process kinds, split by kind.
 */
export function closingNotes(rows, notes, failures) {
  const disturbed = rows.filter((r) => r.outside > OUTSIDE_LOAD_NOTICE);
  const split = rows.filter((r) => kindsText(r) !== '');
  return [
    ...failures.map(failureNote),
    ...(disturbed.length ? [outsideLoadNote(disturbed, rows)] : []),
    ...notes,
    ...(split.length ? [`CPU per request by process kind (µs; every process of a kind together):\n\n${split.map((r) => `- ${r.name}: ${kindsText(r).slice(2, -1)}`).join('\n')}`] : []),
  ];
}

/** The table, the targets and the notes, on the console. */
export function printReport(rows, notes) {
  console.log(`\n${table(rows)}\n\n${targets(rows, OUTSIDE_LOAD_NOTICE)}\n\n${notes.join('\n\n')}`);
}

/** Rewrites docs/benchmarks.md with this run, keeping its hand-written sections (from KEPT_HEADING on). */
export function writeBenchmarksDoc(machine, rows, notes) {
  const doc = join(ROOT, 'docs/benchmarks.md');
  const previous = existsSync(doc) ? readFileSync(doc, 'utf8') : '';
  const kept = previous.includes(`\n${KEPT_HEADING}`) ? previous.slice(previous.indexOf(`\n${KEPT_HEADING}`) + 1) : '';
  writeFileSync(doc, markdown({ method: method(), machine, rows, notes, reproduce: REPRODUCE, outsideNotice: OUTSIDE_LOAD_NOTICE, kept }));
  console.log('\nWrote docs/benchmarks.md');
}

function outsideLoadNote(disturbed, rows) {
  const worst = Math.max(...disturbed.map((r) => r.outside));
  return (
    `Work outside the benchmark kept more than ${OUTSIDE_LOAD_NOTICE} cores busy during ${disturbed.length} of the ${rows.length} rows ` +
    `(up to ${worst.toFixed(2)} of ${CORES}; see the outside load column). Those rows' figures are lower than this machine ` +
    'does when otherwise idle; run again when it is.'
  );
}

/** A failure as a note: its first line, and the rest of its message as a block. */
function failureNote(failure) {
  const [first, ...rest] = failure.split('\n');
  return rest.length ? `Failed: ${first}\n\n\`\`\`\n${rest.join('\n')}\n\`\`\`` : `Failed: ${first}`;
}

function method() {
  return `Every HTTP row: autocannon (one keep-alive connection per concurrent caller, in the benchmark's own
process) for ${DURATION} s after a ${WARM_UP_SECONDS} s warm-up, POSTing \`${BODY}\` to the
\`examples/connectors/ack.js\` connector. Columns:

- **req/s**: the mean over the run; for completion rows, jobs completed per second.
- **vs ceiling**: req/s as a share of the ceiling's doing the same work, and CPU per request as a multiple
  of the ceiling's: c=1 rows against the c=1 ceiling, the large-body and fetch rows against the ceiling of
  that work, every other row against c=50.
- **p50, p99**: autocannon's latencies. **errors**: connection errors and timeouts plus non-2xx answers; for
  completion rows, jobs that ended Failed.
- **CPU per request**: CPU time (user + system, every thread, from /proc) of the service processes during
  the row's window, divided by the requests answered or jobs completed in it. On cores shared with the load
  generator it bounds req/s better than the clock. Rows with several process kinds are split by kind in the
  notes (gateway, executor, control). **broker CPU per request**: the same for RabbitMQ's
  Erlang VM (beam.smp).
- **RSS**: the service processes' resident memory at the end of the row.
- **outside load**: cores the machine was busy with beyond this run's processes (the services, the broker,
  the load generator) during the row, from /proc/stat: other users' work and time the hypervisor took.
  Above ${OUTSIDE_LOAD_NOTICE} the row's figures are low and a note says so.

Rows:

- **ceiling**: a bare Koa route in its own process doing the ack connector's transform
  (tools/bench/ceiling.mjs): no store, no sandbox, no auth. The same route with the large body, and a
  route forwarding the order with Node's \`fetch\` to the same downstream API as the forwarding connector
  (tools/bench/mock-api.mjs, whose CPU is not counted), are the ceilings of those rows.
- **large JSON body**: an order of 800 lines (${Math.round(LARGE_BODY.length / 1000)} KB), to the ack connector (which reads
  \`RequestBody.orderId\`) and to one that never reads \`RequestBody\`.
- **embedded sync**: \`gi up\` with one process (SQLite store in a temporary directory, in-process bus, the
  QuickJS sandbox with its default worker threads), sync calls.
- **GitHub signature instead of a token**: the same sync calls to the ack connector of an integration
  whose inbound auth is \`github\` (docs/inbound.md): each call carries \`X-Hub-Signature-256\` of the
  body and no token; the gateway opens the key secret and checks the HMAC over the body's bytes. Compared
  with the bearer row above it, what verifying a signature costs per call.
- **one caller timed to the µs**: the same sync calls, one at a time over one keep-alive connection from a
  plain Node client (tools/bench/sequential.mjs) after 500 not counted: p50 and p99 to the hundredth of a
  millisecond, which autocannon's whole milliseconds cannot give.
- **embedded sync, --processes N**: \`gi up --processes N\` (N processes sharing the port and the store,
  EXECUTOR_CONCURRENCY and the sandbox threads split between them), sync calls at c=50; CPU per request
  counts the primary and every process. On a machine of 2 cores shared with the load generator, 2 processes
  cannot double the rate: compare the CPU per request.
- **durable**: \`gi up\` with one process; the ack connector after ${STEPS_PER_CALL} journalled \`Context.Step\`s
  per call against the ack connector alone, in the same process, both sync at c=50; **CPU per journalled
  step** is the difference per step. **A resumed run answering ${REPLAYED_STEPS.toLocaleString('en')} finished steps**: one
  async invocation journals that many steps, suspends in a 1.5 s sleep, and is resumed: p50 is the resumed
  attempt's time from its claim to its outcome.
- **SQLite writer ceiling**: tools/bench/sqlite-writer-ceiling.ts, no HTTP: each process runs 50 loops of
  create, claim and complete through the real store (group-committed) on one SQLite file for ${DURATION} s
  after a 1 s warm-up; req/s is invocations per second, CPU per request the CPU of the writing processes per invocation.
- **embedded async accept**: 202s per second at c=50; the same process runs the jobs meanwhile, so its CPU
  per request includes running them; its service has \`BOT_MAX_IN_FLIGHT=1000000\`, as the backlog of 10 s of
  accepts passes the default quota of 10,000. **embedded async completions/s**: the jobs accepted in that run,
  completed per second from the first completion to the last, counted by the service's
  \`gi_invocation_outcomes_total\` (read every ${SAMPLE_MS} ms). The warm-up's jobs finish before either is
  measured.
- **poll wake latency**: a job that runs about 20 ms, polled with \`waitSeconds=30\` right after its 202: the
  time from the finish the executor recorded to the poll's answer, ${POLL_SAMPLES} in sequence (polls that
  arrived after the finish are left out).
- **distributed**: \`gi control\`, \`gi gateway\` and \`gi executor\` processes over RabbitMQ (one quorum queue,
  publisher confirms) sharing one SQLite file; executors with EXECUTOR_CONCURRENCY=${EXECUTOR_CONCURRENCY} and
  SANDBOX_WORKERS=1, pinned one per core (the first on core 1, the second on core 0). **async accept**: no
  executor runs, so the gateway, the broker and the store have the cores; the jobs (warm-up included) wait
  in the queue. **completions/s**: that backlog drained by one executor, then, topped up with no executor
  running, by two started together; each over a window of up to ${DURATION} s that opens
  ${DRAIN_SETTLE_MS / 1000} s after every executor has completed a job (start-up and first runs are not
  counted) and closes early if the queue runs low (no executor waits for work). CPU per request counts the
  executors, gateway and control. What is left of the backlog is then purged. The scaling target calls
  the broker the limit when the cores were at least 90% busy during the two executors' window and RabbitMQ
  used more CPU than the executors lacked for 1.7x. **sync c=50**: with 1 executor, then with 2.
- **broker alone**: tools/bench/broker-costs.mjs, no service running: each kind of message a call sends,
  ${BROKER_OPERATIONS.toLocaleString('en')} times with ${IN_FLIGHT} in flight from one connection, after a warm-up; req/s is operations per second,
  broker the RabbitMQ CPU per operation. Its messages come in larger batches than a service's, so the parts
  add up to less than a distributed row's broker CPU per call (docs/scaling.md).
- **sandbox overhead**: the runtime's own micro-benchmark (libs/sandbox/bench/overhead.ts), in the notes.`;
}

const REPRODUCE = `\`\`\`sh
npm ci
npm run bench                      # builds, runs every scenario, rewrites this file (2 to 3 minutes)
BENCH_SECONDS=2 npm run bench      # shorter measured runs (default ${DEFAULT_SECONDS} s each)
BENCH_ONLY=embedded npm run bench  # only some scenarios (ceiling, embedded, durability, durable, processes, writer, distributed, broker, sandbox); the doc is not rewritten
ACCESS_LOG=off BENCH_ONLY=embedded npm run bench  # the same without the access line, for its cost
HEAP_GROWTH_PERCENT=0 BENCH_ONLY=embedded npm run bench  # with V8's own heap growth (docs/operations.md, Memory)
AMQP_URL=amqp://user:pass@host:5672 npm run bench   # another broker (default amqp://guest:guest@127.0.0.1:5672)
\`\`\`

The distributed rows need RabbitMQ (skipped with a note otherwise); the executors are pinned with
\`taskset\` (util-linux) where it exists.`;
