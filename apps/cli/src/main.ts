import { readCliEnv } from '@gi/config';
import { nodeIo } from './cli-io';
import { runCli } from './run-cli';

// A closed pipe (gi token list | head -1) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

// The embedded service (koa, SQLite, QuickJS) loads only for `gi up`, so admin commands start fast.
const runUp = async (argv: string[]) => (await import('./up')).runUp(argv);

void runCli(process.argv.slice(2), nodeIo(), readCliEnv(), runUp).then((code) => {
  process.exitCode = code;
});
