// The processes a benchmark run starts, and what it reads about them from /proc. Every process started
// here is stopped by stopAll(), and killed outright if the run itself exits first.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
/** Lines of a process's output kept to explain why it failed to start. */
const KEPT_LINES = 15;

const running = new Set();

process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts a Node script that logs `{"msg":"listening","port":N}` (a service, or the ceiling); resolves
 * with its URL once it does. `cpus` pins it with taskset (e.g. "1").
 */
export function startNode(argv, env, { cpus } = {}) {
  const command = cpus === undefined ? process.execPath : 'taskset';
  const args = cpus === undefined ? argv : ['-c', cpus, process.execPath, ...argv];
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const name = argv.slice(0, 2).map((a) => a.split('/').pop()).join(' ');
  const lastLines = [];
  return new Promise((resolveStarted, reject) => {
    const fail = (why) => {
      child.kill('SIGKILL');
      reject(new Error(`${name} ${why}${lastLines.length ? `; its last output:\n${lastLines.join('\n')}` : ''}`));
    };
    const timer = setTimeout(() => fail(`did not start in ${START_TIMEOUT_MS / 1000} s`), START_TIMEOUT_MS);
    const onLine = (line) => {
      lastLines.push(line);
      if (lastLines.length > KEPT_LINES) lastLines.shift();
      const port = listeningPort(line);
      if (port !== null) {
        clearTimeout(timer);
        resolveStarted({ child, pid: child.pid, url: `http://127.0.0.1:${port}`, name });
      }
    };
    // Every line is read, so a busy process never blocks on a full pipe.
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.once('error', (error) => (clearTimeout(timer), fail(`could not be started: ${error.message}`)));
    child.once('exit', (code, signal) => (clearTimeout(timer), fail(`exited with ${code ?? signal}`)));
  });
}

function listeningPort(line) {
  try {
    const entry = JSON.parse(line);
    return entry.msg === 'listening' ? entry.port : null;
  } catch {
    return null;
  }
}

/** SIGTERM (a graceful shutdown), then SIGKILL if it has not exited in time. */
export function stop(service) {
  const { child } = service;
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    child.once('exit', () => (clearTimeout(kill), done()));
    child.kill('SIGTERM');
  });
}

export async function stopAll() {
  await Promise.all([...running].map((child) => stop({ child })));
}

/** Whether `taskset -c <cpus>` works here (util-linux installed, the cores exist and may be used). */
export function canPin(cpus) {
  try {
    execFileSync('taskset', ['-c', cpus, 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time (user + system) a process has used so far, in microseconds, all its threads included. */
export function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** The CPU time of several processes at one moment, to subtract from a later reading. */
export const cpuReading = (pids) => pids.map(cpuMicros);
export const cpuSince = (pids, before) => pids.map(cpuMicros).reduce((sum, after, i) => sum + after - before[i], 0);

/** CPU time the whole machine spent busy so far (every core; steal counts, as time others took), in microseconds. */
export function machineBusyMicros() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return ((user + nice + system + irq + softirq + steal) * 1e6) / CLOCK_TICKS;
}

/** CPU time of the benchmark's own process (the load generator), in microseconds. */
export function ownCpuMicros() {
  const { user, system } = process.cpuUsage();
  return user + system;
}

export function rssMb(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** The child processes of `pid` (the processes of `gi up --processes N` under its primary), from /proc. */
export function childPids(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
