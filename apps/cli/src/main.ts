import { readCliEnv } from '@gi/config';
import { nodeIo } from './cli-io';
import { runCli } from './run-cli';
import { runUp } from './up';

// A closed pipe (gi token list | head -1) is not an error worth a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

void runCli(process.argv.slice(2), nodeIo(), readCliEnv(), runUp).then((code) => {
  process.exitCode = code;
});
