// Bundles each app entry point (apps/*/src/main.ts) into dist/apps/<app>/main.js.
// Workspace libs are inlined through the tsconfig path aliases; npm packages stay external.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

// The sandbox's worker-thread entry is emitted beside each app bundle, where the runtime looks for it.
const SANDBOX_WORKER = join('libs', 'sandbox', 'src', 'sandbox-worker.main.ts');

const apps = readdirSync('apps').filter((app) => existsSync(join('apps', app, 'src', 'main.ts')));
const bundles = apps.flatMap((app) => [
  { app, entry: join('apps', app, 'src', 'main.ts'), out: 'main.js' },
  { app, entry: SANDBOX_WORKER, out: 'sandbox-worker.js' },
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
    }),
  ),
);
console.log(`built ${apps.join(', ')}`);
