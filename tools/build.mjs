// Bundles each app entry point (apps/*/src/main.ts) into dist/apps/<app>/main.js.
// Workspace libs are inlined through the tsconfig path aliases; npm packages stay external.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const apps = readdirSync('apps').filter((app) => existsSync(join('apps', app, 'src', 'main.ts')));
await Promise.all(
  apps.map((app) =>
    build({
      entryPoints: [join('apps', app, 'src', 'main.ts')],
      outfile: join('dist', 'apps', app, 'main.js'),
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      packages: 'external',
      sourcemap: true,
      banner: app === 'cli' ? { js: '#!/usr/bin/env node' } : undefined,
      logLevel: 'warning',
    }),
  ),
);
console.log(`built ${apps.join(', ')}`);
