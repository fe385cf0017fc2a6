// The machine a run measured, described from what the system reports at the start of the run.
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';

/** The cores this run may use: what the CPU budgets and the drains are counted against. */
export const CORES = availableParallelism();

function cpuModel() {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match) return match[1].trim();
  } catch {
    // not Linux
  }
  return cpus()[0]?.model.trim() ?? 'unknown';
}

/** Facts about the machine as `[label, value]` pairs. `broker` and `pinning` describe this run's setup. */
export function describeMachine({ broker, brokerLocal, pinning }) {
  const usable = CORES;
  const cores = cpus().length;
  return [
    ['Date', new Date().toISOString().replace('T', ' ').slice(0, 16) + ' UTC'],
    ['CPU', `${cpuModel()}, ${cores} cores${usable !== cores ? ` (${usable} usable by this process)` : ''}`],
    ['RAM', `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`],
    ['Kernel', `${type()} ${release()}`],
    ['Node', process.version],
    ['Broker', broker ?? 'none answered (distributed rows skipped)'],
    [
      'Sharing the cores',
      `the load generator (autocannon, in the benchmark's own process), ${brokerLocal ? 'RabbitMQ (same host) ' : ''}` +
        `and every service process all run on these ${usable} cores. ${pinning} Nothing else on the machine is stopped for the ` +
        `run; load average before it started: ${loadavg().map((n) => n.toFixed(2)).join(', ')} (1, 5, 15 min).`,
    ],
  ];
}
