// Bundles each app entry point (apps/*/src/main.ts) into dist/apps/<app>/main.js.
// Workspace libs are inlined through the tsconfig path aliases; npm packages stay external.
// The web console's static files are copied beside the CLI bundle, which serves them.
import { build } from 'esbuild';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { writeGenerated as writeContextTypes } from './connector-context-types.mjs';
import { writeGenerated } from './sandbox-globals.mjs';

// The connector globals (libs/sandbox/guest) are compiled into the source the sandbox evaluates.
if (await writeGenerated()) console.log('generated the connector globals (libs/sandbox/src/host/sources.generated.ts)');
// The starter project of `gi connector init` carries the connector types of the examples.
if (writeContextTypes()) console.log('copied the connector types (apps/cli/src/starter/context-types.generated.ts)');

// The sandbox's worker-thread entry is emitted beside each app bundle, where the runtime looks for it;
// so is the control API's diff thread (libs/sandbox/src/threads/diff-thread.ts).
const SANDBOX_WORKER = join('libs', 'sandbox', 'src', 'threads', 'sandbox-worker.main.ts');
const DIFF_WORKER = join('libs', 'sandbox', 'src', 'threads', 'diff-worker.main.ts');

// The release, for the services' start line and gi_build_info (libs/config/src/release.ts).
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

const apps = readdirSync('apps').filter((app) => existsSync(join('apps', app, 'src', 'main.ts')));
const bundles = apps.flatMap((app) => [
  { app, entry: join('apps', app, 'src', 'main.ts'), out: 'main.js' },
  { app, entry: SANDBOX_WORKER, out: 'sandbox-worker.js' },
  { app, entry: DIFF_WORKER, out: 'diff-worker.js' },
]);
await Promise.all(
  bundles.map(({ app, entry, out }) =>
    build({
      entryPoints: [entry],
      outfile: join('dist', 'apps', app, out),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      sourcemap: true,
      banner: out === 'main.js' ? { js: '#!/usr/bin/env node' } : undefined,
      logLevel: 'warning',
      define: { __GI_RELEASE__: JSON.stringify(version) },
    }),
  ),
);

// Only what the console serves (no tsconfig or notes): apps/control/src/console-assets.ts names the same types.
const CONSOLE_SOURCE = join('apps', 'control', 'console');
const CONSOLE_TARGET = join('dist', 'apps', 'cli', 'console');
const CONSOLE_FILES = new Set(['.html', '.js', '.css', '.svg']);
rmSync(CONSOLE_TARGET, { recursive: true, force: true });
cpSync(CONSOLE_SOURCE, CONSOLE_TARGET, { recursive: true, filter: (path) => statSync(path).isDirectory() || CONSOLE_FILES.has(extname(path)) });

console.log(`built ${apps.join(', ')} and the console`);
