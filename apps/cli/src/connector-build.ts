import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import type { BuildFailure, Message, Metafile, Plugin } from 'esbuild';
import { connectorCodeSizeProblem, connectorSourcesSizeProblem, MAX_CONNECTOR_SOURCES } from '@gi/domain';
import type { ConnectorSource } from '@gi/domain';
import { CliError } from './cli-errors';
import { readLocalFile } from './read-local-file';

/** What a deploy or a local run sends to the sandbox: the code it runs and, for a bundle, the files it was built from. */
export interface ConnectorBuild {
  code: string;
  /** The project's own files (not its packages) as written; empty for a plain script. */
  sources: ConnectorSource[];
}

/** Entry files that are always bundled; a `.js` file is bundled only when it imports or exports. */
const MODULE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.mjs']);
export const ENTRY_EXTENSIONS = ['.js', ...MODULE_EXTENSIONS];

/** A line that starts with an import or export statement (a `.js` file that is a module). */
const MODULE_SYNTAX = /^\s*(import\s*[\w{*'"]|export\s)/m;

const RETURN_HINT =
  'a bundled connector is a module, where `return` cannot end the code: put the rest in an if/else, or call Context.RaiseError (see docs/connectors.md, "TypeScript and packages")';

/**
 * The connector a file on the command line stands for. A plain `.js` script (no import or export)
 * is sent exactly as written: its code is the body of an async function, where top-level `await`
 * and `return` work. A TypeScript or module entry is bundled with its local imports and the packages
 * of its project's node_modules into one ES2023 script with no imports and no exports, which runs in
 * the sandbox as that function body (so top-level `await` works, `return` does not). TypeScript's
 * types are stripped, not checked.
 */
export async function buildConnector(file: string): Promise<ConnectorBuild> {
  const extension = extname(file).toLowerCase();
  if (extension !== '.js' && !MODULE_EXTENSIONS.has(extension)) {
    throw new CliError(`${file}: a connector entry file ends in ${ENTRY_EXTENSIONS.join(', ')}`);
  }
  const text = (await readLocalFile(file)).toString('utf8');
  if (extension === '.js' && !MODULE_SYNTAX.test(text)) return checkedSize(file, { code: text, sources: [] });
  return checkedSize(file, await bundle(file));
}

async function bundle(file: string): Promise<ConnectorBuild> {
  // Loaded here: only commands that bundle pay for it.
  const { build } = await import('esbuild');
  const entry = resolve(file);
  const root = projectRoot(entry);
  const shown = (path: string) => relative(process.cwd(), resolve(root, path)) || path;
  let result;
  try {
    result = await build({
      entryPoints: [entry],
      absWorkingDir: root,
      bundle: true,
      write: false,
      outfile: 'connector.js',
      format: 'esm',
      target: 'es2023',
      platform: 'neutral',
      // The sandbox is a Workers-style runtime: packages' worker or browser builds first, as Workers' own bundler picks them.
      mainFields: ['browser', 'module', 'main'],
      conditions: ['workerd', 'worker', 'browser'],
      charset: 'utf8',
      metafile: true,
      logLevel: 'silent',
      plugins: [refuseNodeBuiltins],
    });
  } catch (error) {
    const errors = (error as Partial<BuildFailure>).errors;
    if (!errors?.length) throw error;
    throw new CliError(errors.map((message) => describe(message, shown)).join('\n'));
  }
  const output = result.outputFiles[0];
  const exported = result.metafile.outputs[Object.keys(result.metafile.outputs)[0]]?.exports ?? [];
  if (exported.length > 0) {
    throw new CliError(`${file}: the entry file exports ${exported.join(', ')}: a connector is the code of its entry file, which exports nothing (export from the files it imports)`);
  }
  return { code: output.text, sources: await sourcesOf(result.metafile, root, entry, file) };
}

/** A Node built-in is refused where it is imported, rather than failing in the sandbox at run time. */
const refuseNodeBuiltins: Plugin = {
  name: 'refuse-node-builtins',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (!isBuiltin(args.path) || args.kind === 'entry-point') return undefined;
      return {
        errors: [{ text: `"${args.path}" is a Node.js built-in module: connectors run in a sandbox without Node's APIs (see docs/connectors.md, "Standard globals")` }],
      };
    });
  },
};

/** `src/index.ts:3:7: error text`, as compilers report, with the column counted from 1. */
function describe(message: Message, shown: (path: string) => string): string {
  const text = /Top-level return cannot be used/.test(message.text) ? `${message.text}: ${RETURN_HINT}` : message.text;
  const at = message.location;
  if (!at) return text;
  return `${shown(at.file)}:${at.line}:${at.column + 1}: ${text}`;
}

/** The directory of the nearest package.json above the entry, else the entry's own directory. */
function projectRoot(entry: string): string {
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return dirname(entry);
  }
}

/**
 * The files of the bundle that are the project's own, entry first, with paths from the project root;
 * when some lie outside it (a monorepo's shared folder), from the nearest folder that holds them all,
 * so a kept path never climbs out (`..`).
 */
async function sourcesOf(metafile: Metafile, root: string, entry: string, file: string): Promise<ConnectorSource[]> {
  const own = Object.keys(metafile.inputs)
    .filter((path) => !path.split('/').includes('node_modules') && !path.includes(':'))
    .map((path) => resolve(root, path));
  if (own.length > MAX_CONNECTOR_SOURCES) {
    throw new CliError(`${file}: the bundle is built from ${own.length} files of the project, more than the ${MAX_CONNECTOR_SOURCES} a version keeps`);
  }
  const base = own.reduce(commonFolder, root);
  const kept = (path: string) => relative(base, path).split(sep).join('/');
  // The entry first, then the others by path.
  own.sort((a, b) => (a === entry ? -1 : b === entry ? 1 : a < b ? -1 : a > b ? 1 : 0));
  return Promise.all(own.map(async (path) => ({ path: kept(path), content: await readFile(path, 'utf8') })));
}

/** The deepest folder holding both `folder` and `path`. */
function commonFolder(folder: string, path: string): string {
  let common = folder;
  while (relative(common, path).split(sep)[0] === '..') common = dirname(common);
  return common;
}

function checkedSize(file: string, built: ConnectorBuild): ConnectorBuild {
  const problem = connectorCodeSizeProblem(built.code) ?? connectorSourcesSizeProblem(built.sources);
  if (problem) throw new CliError(`${file}: ${problem}`);
  return built;
}
