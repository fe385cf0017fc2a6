import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** How to start a sandbox worker thread: a JavaScript file, or the TypeScript source through @swc/core. */
export type WorkerScript =
  | { kind: 'file'; filename: string }
  | { kind: 'typescript'; bootstrap: string; swcCore: string; entry: string };

/** A worker thread's entry: its TypeScript source in libs/sandbox/src/threads, and the file the build emits beside each app bundle. */
export interface WorkerEntry {
  /** `<name>.ts` beside this module in libs/sandbox/src/threads (`<name>.js` once compiled). */
  name: string;
  bundled: string;
}

export const SANDBOX_WORKER: WorkerEntry = { name: 'sandbox-worker.main', bundled: 'sandbox-worker.js' };

/**
 * Registers a `.ts` loader backed by @swc/core and resolves the workspace's `@gi/<lib>` imports to
 * libs/<lib>/src (what the bundler does for the built worker), then loads the worker entry.
 */
const TYPESCRIPT_BOOTSTRAP = `
const Module = require('node:module');
const { readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { workerData } = require('node:worker_threads');
const swc = require(workerData.typescript.swcCore);
const libs = join(dirname(workerData.typescript.entry), '..', '..', '..'); // the entry is libs/sandbox/src/threads/<name>.ts
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const lib = /^@gi\\/([a-z-]+)$/.exec(request);
  return resolve.call(this, lib ? join(libs, lib[1], 'src', 'index.ts') : request, ...rest);
};
Module._extensions['.ts'] = function (module, filename) {
  const { code } = swc.transformSync(readFileSync(filename, 'utf8'), {
    filename,
    sourceMaps: 'inline',
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
require(workerData.typescript.entry);
`;

/**
 * Finds a worker's entry (the sandbox's unless told): compiled JavaScript beside this module or
 * beside the bundle (`sandbox-worker.js`), else the TypeScript source in the checkout when @swc/core
 * is installed. Null when neither exists; the work then runs on the calling thread.
 */
export function locateWorkerScript(here: string = __dirname, worker: WorkerEntry = SANDBOX_WORKER): WorkerScript | null {
  for (const name of [`${worker.name}.js`, worker.bundled]) {
    const filename = join(here, name);
    if (existsSync(filename)) return { kind: 'file', filename };
  }
  const entry = findSource(here, worker.name);
  if (!entry) return null;
  try {
    const fromEntry = createRequire(entry);
    const swcCore = fromEntry.resolve('@swc/core');
    // Loaded here first: a native addon first loaded by a worker thread is torn down with it, and
    // terminating a worker that runs a connector would then crash the process.
    fromEntry(swcCore);
    return { kind: 'typescript', bootstrap: TYPESCRIPT_BOOTSTRAP, swcCore, entry };
  } catch {
    return null;
  }
}

/** The TypeScript entry beside this file, or in libs/sandbox/src/threads of a checkout above a bundle. */
function findSource(here: string, name: string): string | null {
  const beside = join(here, `${name}.ts`);
  if (existsSync(beside)) return beside;
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'libs', 'sandbox', 'src', 'threads', `${name}.ts`);
    if (existsSync(candidate)) return candidate;
  }
  return null;
}
