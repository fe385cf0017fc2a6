import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = resolve(__dirname, '../../..');
export const CLI = join(ROOT, 'dist/apps/cli/main.js');
export const ADMIN_TOKEN = 'e2e-admin-token-0123456789abcdef';

export interface ServiceProcess {
  baseUrl: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process printed (JSON log lines and stderr). */
  output: string[];
  /** SIGTERM (or the given signal) and wait for exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Stops the process and removes its data directory. */
  dispose(): Promise<void>;
}

export interface StartOptions {
  /** `up` (embedded, the default; what `npm start` runs) or a distributed service. */
  command?: 'up' | 'gateway' | 'results' | 'control' | 'executor';
  args?: string[];
  env?: Record<string, string>;
  /** Reuse a data directory to restart on the same store; a temporary one otherwise. */
  dataDir?: string;
  /** A command the service runs under, e.g. `ip netns exec <name>` (its process id stays the service's). */
  wrap?: string[];
  /** The address it listens on and is called at; 127.0.0.1 by default. */
  host?: string;
}

/** Every service process a test file started and has not seen exit: killed after the file (see jest.setup.ts). */
const running = new Set<ChildProcess>();

/** Kills what a test file left running (a test that failed before its cleanup), so no process outlives its file. */
export async function killLeftoverServices(): Promise<void> {
  const left = [...running];
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** Starts a built service (`gi <command>`) as a child process on a free port and waits until it listens. */
export async function startService(options: StartOptions = {}): Promise<ServiceProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gi-e2e-'));
  // The user's configuration directory, where an embedded service keeps the SECRETS_KEY it generates:
  // one per data directory (a restart on the same store finds its key), beside it, never in the real home.
  const configDir = `${dataDir.replace(/\/+$/, '')}.config`;
  const host = options.host ?? '127.0.0.1';
  const [file, ...prefix] = [...(options.wrap ?? []), process.execPath];
  const child = spawn(file, [...prefix, CLI, options.command ?? 'up', ...(options.args ?? [])], {
    cwd: ROOT,
    // One embedded process unless a test asks for more (`gi up` would take every core of the machine).
    env: { PATH: process.env.PATH, PORT: '0', HOST: host, DATA_DIR: dataDir, XDG_CONFIG_HOME: configDir, ADMIN_TOKEN, LOG_LEVEL: 'info', EMBEDDED_PROCESSES: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => output.push(line));
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );

  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`service did not start:\n${output.join('\n')}`));
    }, 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; port?: number };
        if (entry.msg === 'listening' && entry.port) {
          clearTimeout(timer);
          resolvePort(entry.port);
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening:\n${output.join('\n')}`));
    });
  });

  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return {
    baseUrl: `http://${host}:${port}`,
    dataDir,
    child,
    output,
    stop,
    async dispose() {
      await stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (!options.dataDir) rmSync(configDir, { recursive: true, force: true });
    },
  };
}
