// Turns a run's rows into the printed table, the targets of the issue with met / not met, and
// docs/benchmarks.md.

const cell = (value, unit = '') => (value === null || value === undefined || Number.isNaN(value) ? '' : `${value}${unit}`);
const percent = (ratio) => `${Math.round(ratio * 100)}%`;

/** The row's req/s as a share of the ceiling's at the concurrency it is compared with. */
function ratioCell(row, rowsById) {
  if (row.isCeiling) return 'ceiling';
  const ceiling = row.against && rowsById.get(`ceiling-${row.against}`);
  if (!ceiling?.rps || !row.rps) return '';
  return `${percent(row.rps / ceiling.rps)} of ${row.against}`;
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
  const accept = byId.get('distributed-accept');
  const [one, two] = [byId.get('distributed-drain-1'), byId.get('distributed-drain-2')];
  const check = (target, measuredRows, measured, ok) => ({ target, measuredRows, ...(measuredRows.every(Boolean) ? { measured: measured(), result: ok() ? 'met' : 'not met' } : {}) });
  const list = [
    check("Embedded sync, c=50: >= 40% of the ceiling's req/s", [sync, ceiling], () => percent(sync.rps / ceiling.rps), () => sync.rps / ceiling.rps >= 0.4),
    check('Embedded sync, c=50: p99 <= 25 ms', [sync], () => `${sync.p99} ms`, () => sync.p99 <= 25),
    check('Poll wake latency: p99 <= 20 ms', [wake], () => `${wake.p99} ms`, () => wake.p99 <= 20),
    check('Distributed async accept (publisher confirms): >= 3,000 req/s', [accept], () => `${accept.rps} req/s`, () => accept.rps >= 3000),
    { target: '2 executors >= 1.7x one on completion throughput (broker not the limit)', measuredRows: [one, two], ...scalingVerdict(one, two) },
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

export function markdown({ method, machine, rows, notes, reproduce, outsideNotice }) {
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
`;
}
