import { parseCliConfig, type CliEnv } from '@gi/config';
import { AdminTokenSource } from './admin-token';
import { builtinCommands } from './builtin-commands';
import { UsageError } from './cli-errors';
import { writeLine, type CliIo, type TextSink } from './cli-io';
import { errorLine, problemOfError } from './cli-problem';
import type { CommandSpec } from './command';
import { COMMANDS } from './commands';
import { ControlClient } from './control-client';
import { json } from './format';
import { helpFor } from './help';
import { parseCommandLine } from './parse-command-line';
import { SERVICE_NAMES, type ServiceName } from './service-names';
import { terminalSink } from './terminal-text';

export type RunService = (name: ServiceName, argv: string[]) => Promise<void>;

/** The whole command table: the commands of the service, then version and completion (made from this table). */
export const ALL_COMMANDS: readonly CommandSpec[] = [...COMMANDS, ...builtinCommands(() => ALL_COMMANDS)];

/**
 * Runs one `gi` command line; resolves with the exit code. A failure is one line on stderr; with
 * --json, stdout carries exactly one JSON document: the command's output, or the failure as a problem.
 */
export async function runCli(argv: string[], io: CliIo, env: CliEnv, runService: RunService): Promise<number> {
  const jsonMode = argv.includes('--json') && !SERVICE_NAMES.some((name) => name === argv[0]);
  // With --json the command's stdout is held back, so a failure part-way replaces it instead of following it.
  const held = jsonMode ? heldSink() : null;
  // Text shows what callers and connectors wrote as inert text; a --json document is left as JSON wrote it.
  const out = held ? io.out : terminalSink(io.out);
  const err = terminalSink(io.err);
  const commandIo: CliIo = { ...io, out: held ?? out, err };
  try {
    const parsed = parseCommandLine(argv, ALL_COMMANDS);
    if (parsed.kind === 'service') {
      await runService(parsed.name, parsed.args);
      return 0;
    }
    if (parsed.kind === 'help') {
      const text = helpFor(parsed.topic, ALL_COMMANDS);
      if (text === null) throw new UsageError(`no help for "${parsed.topic.join(' ')}": unknown command`);
      if (!parsed.requested) {
        writeLine(err, text);
        if (held) throw new UsageError('no command given');
        return 2;
      }
      writeLine(out, held ? json({ help: text }) : text);
      return 0;
    }
    const { spec } = parsed;
    const config = spec.standalone ? parseCliConfig({}) : parseCliConfig(env, { url: parsed.globals.url, adminToken: parsed.globals.adminToken });
    const adminToken = new AdminTokenSource(config);
    const control = new ControlClient(config.url, adminToken);
    const ctx = { io: commandIo, json: parsed.globals.json, url: config.url, adminToken, control, connectorTrustedAddresses: config.connectorTrustedAddresses, environment: env.variables ?? {} };
    await spec.run(ctx, parsed.input);
    if (held) writeLine(out, asJsonDocument(held.text()));
    return 0;
  } catch (error) {
    writeLine(err, errorLine(error));
    const problem = problemOfError(error);
    // What the command printed before it failed (`gi connector run`: the run's result and logs) stays, inside the problem.
    const output = held?.text().trim() ? JSON.parse(asJsonDocument(held.text())) : undefined;
    if (jsonMode) writeLine(out, json(output === undefined ? problem : { ...problem, output }));
    return problem.exitCode;
  }
}

function heldSink(): TextSink & { text(): string } {
  let text = '';
  return { write: (chunk: string) => (text += chunk), isTTY: false, text: () => text };
}

/**
 * What a command printed with --json, as one document: commands print JSON themselves; text from
 * one that has no structured output is wrapped as {"output": text}, and no output at all is {}.
 */
export function asJsonDocument(text: string): string {
  if (text.trim() === '') return '{}';
  try {
    JSON.parse(text);
    return text;
  } catch {
    return json({ output: text.replace(/\n$/, '') });
  }
}
