import { readCliEnv } from '@gi/config';
import { nodeIo } from './cli-io';
import { runCli, type RunService } from './run-cli';

// A closed pipe (gi token list | head -1) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

// The services (koa, SQLite, QuickJS, amqplib) load only for `gi up`, `gi gateway`, ..., so admin commands start fast.
const runService: RunService = async (name, argv) => (await import('./start-service')).runService(name, argv);

void runCli(process.argv.slice(2), nodeIo(), readCliEnv(), runService).then((code) => {
  process.exitCode = code;
});
