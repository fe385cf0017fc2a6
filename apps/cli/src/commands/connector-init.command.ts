import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { CliError } from '../cli-errors';
import { writeLine } from '../cli-io';
import type { CommandSpec } from '../command';
import { json } from '../format';
import { starterFiles } from '../starter/starter-files';

export const connectorInit: CommandSpec = {
  path: ['connector', 'init'],
  summary: 'Write a starter TypeScript connector project: src/index.ts, context.d.ts, tsconfig, a sample request, a README',
  args: ['dir'],
  options: {},
  details: [
    'The directory is made if needed and must be empty. Then, inside it:',
    '  gi connector run src/index.ts --request samples/order.json   runs the connector locally',
    '  npm install && npm run typecheck                             checks the types (a deploy does not)',
    '  gi connector deploy src/index.ts --bot B --integration I --entity E',
  ].join('\n'),
  async run(ctx, input) {
    const dir = input.arg('dir');
    const existing = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [];
      throw new CliError(`cannot use ${dir}: ${error.code === 'ENOTDIR' ? 'it is not a directory' : (error.code ?? String(error))}`);
    });
    if (existing.length > 0) throw new CliError(`${dir} is not empty: gi connector init writes a new project into an empty or new directory`);
    const files = starterFiles(packageName(basename(resolve(dir))));
    for (const [path, content] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), content, { flag: 'wx' });
    }
    if (ctx.json) return void writeLine(ctx.io.out, json({ dir, files: Object.keys(files) }));
    writeLine(ctx.io.out, [`Wrote a connector project in ${dir}: ${Object.keys(files).join(', ')}`, `Next: cd ${dir} && gi connector run src/index.ts --request samples/order.json`].join('\n'));
  },
};

/** An npm package name from the directory's (lower case, letters, digits, - . _). */
function packageName(dir: string): string {
  const name = dir.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '');
  return name || 'connector';
}
