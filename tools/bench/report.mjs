// Turns a run's rows into the printed table, the targets of the issue with met / not met, and
// docs/benchmarks.md.
import { CORES } from './machine.mjs';

const cell = (value, unit = '') => (value === null || value === undefined || Number.isNaN(value) ? '' : `${value}${unit}`);
const percent = (ratio) => `${Math.round(ratio * 100)}%`;
/** The forwarding row's req/s before the work on forwarding (docs/benchmarks.md, the run of that day): its target is 3x this. */
const FORWARD_RPS_BEFORE = 989;
/** The heading of the hand-written part of docs/benchmarks.md that a run keeps (see `markdown`). */
export const KEPT_HEADING = '## Before and after';

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
