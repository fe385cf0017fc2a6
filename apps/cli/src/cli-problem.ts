import { ConfigError } from '@gi/config';
import { CliError, UsageError } from './cli-errors';
import { UnreachableError } from './http-send';
import { ApiError, type Problem } from './problem';

/** Problem types of failures found by the CLI itself; the service's own keep their urn:gi:problem: types. */
const CLI_PROBLEM_PREFIX = 'urn:gi:problem:cli-';

/** An RFC 9457 problem document plus the exit code of the command, as `--json` prints a failure. */
export type CliProblem = Problem & { exitCode: number };

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * The one mapping from a failure to what `gi` reports: a problem document (`--json`) and an exit
 * code. A reply of the service is passed through as it came, with the exit code added.
 */
export function problemOfError(error: unknown): CliProblem {
  if (error instanceof ApiError) return { ...error.problem, exitCode: error.exitCode };
  if (error instanceof UsageError) {
    return { type: `${CLI_PROBLEM_PREFIX}usage`, title: 'Invalid command line', status: 400, detail: error.message, help: error.helpCommand, exitCode: error.exitCode };
  }
  if (error instanceof ConfigError) {
    return { type: `${CLI_PROBLEM_PREFIX}settings`, title: 'Invalid settings', status: 400, detail: error.problems.join('; '), exitCode: 2 };
  }
  if (error instanceof UnreachableError) {
    return { type: `${CLI_PROBLEM_PREFIX}unreachable`, title: 'Service unreachable', status: 503, detail: error.message, exitCode: error.exitCode };
  }
  if (error instanceof CliError) {
    return { type: `${CLI_PROBLEM_PREFIX}failed`, title: 'Command failed', status: 422, detail: error.message, exitCode: error.exitCode };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { type: `${CLI_PROBLEM_PREFIX}internal`, title: 'Unexpected error', status: 500, detail: oneLine(message), exitCode: 1 };
}

/** The one-line form on stderr: "error: ..." (usage errors point at the help). */
export function errorLine(error: unknown): string {
  if (error instanceof UsageError) return `error: ${error.message} (see '${error.helpCommand}')`;
  if (error instanceof ConfigError) return `error: invalid settings: ${error.problems.join('; ')}`;
  if (error instanceof CliError) return `error: ${error.message}`;
  return `error: ${problemOfError(error).detail ?? ''}`;
}
