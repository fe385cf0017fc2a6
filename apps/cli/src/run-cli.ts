import { ConfigError, parseCliConfig, type CliEnv } from '@gi/config';
import { AdminTokenSource } from './admin-token';
import { CliError, UsageError } from './cli-errors';
import { writeLine, type CliIo } from './cli-io';
import { COMMANDS } from './commands';
import { ControlClient } from './control-client';
import { helpFor } from './help';
import { parseCommandLine } from './parse-command-line';
import type { ServiceName } from './service-names';

export type RunService = (name: ServiceName, argv: string[]) => Promise<void>;

/** Runs one `gi` command line; resolves with the exit code. Failures are one line on stderr. */
export async function runCli(argv: string[], io: CliIo, env: CliEnv, runService: RunService): Promise<number> {
  try {
    const parsed = parseCommandLine(argv, COMMANDS);
    if (parsed.kind === 'service') {
      await runService(parsed.name, parsed.args);
      return 0;
    }
    if (parsed.kind === 'help') {
      const text = helpFor(parsed.topic, COMMANDS);
      if (text === null) throw new UsageError(`no help for "${parsed.topic.join(' ')}": unknown command`);
      writeLine(parsed.requested ? io.out : io.err, text);
      return parsed.requested ? 0 : 2;
    }
    const config = parseCliConfig(env, { url: parsed.globals.url, adminToken: parsed.globals.adminToken });
    const adminToken = new AdminTokenSource(config);
    const control = new ControlClient(config.url, adminToken);
    const ctx = { io, json: parsed.globals.json, url: config.url, adminToken, control, connectorTrustedAddresses: config.connectorTrustedAddresses, environment: env.variables ?? {} };
    await parsed.spec.run(ctx, parsed.input);
    return 0;
  } catch (error) {
    return report(io, error);
  }
}

function report(io: CliIo, error: unknown): number {
  if (error instanceof UsageError) {
    writeLine(io.err, `error: ${error.message} (see '${error.helpCommand}')`);
    return error.exitCode;
  }
  if (error instanceof ConfigError) {
    writeLine(io.err, `error: invalid settings: ${error.problems.join('; ')}`);
    return 2;
  }
  if (error instanceof CliError) {
    writeLine(io.err, `error: ${error.message}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  writeLine(io.err, `error: ${message.replace(/\s+/g, ' ').trim()}`);
  return 1;
}
