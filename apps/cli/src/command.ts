import type { CliIo } from './cli-io';
import type { CommandInput } from './command-input';
import type { AdminTokenSource } from './admin-token';
import type { ControlClient } from './control-client';

export interface OptionSpec {
  type: 'string' | 'boolean';
  multiple?: boolean;
  short?: string;
  required?: boolean;
  /** Placeholder shown in help, e.g. SECONDS; F or FILE (or a name ending in -file) completes file names. */
  value?: string;
  description: string;
}

export type OptionSpecs = Record<string, OptionSpec>;

/** What every command gets: output, settings and the admin API client. */
export interface CommandContext {
  io: CliIo;
  json: boolean;
  /** Base URL of the service. */
  url: string;
  adminToken: AdminTokenSource;
  control: ControlClient;
  /** `CONNECTOR_TRUSTED_ADDRESSES`: what `gi connector run` lets connectors reach, as the service does. */
  connectorTrustedAddresses: readonly string[];
  /** The environment, read by name only (`gi connector run --secret-env NAME`). */
  environment: Readonly<Record<string, string | undefined>>;
}

/** One `gi` command: its words, arguments, options and what it does. */
export interface CommandSpec {
  path: readonly string[];
  summary: string;
  /** Positional argument names, in order; all required. */
  args: readonly string[];
  options: OptionSpecs;
  /** Extra help text (examples, notes). */
  details?: string;
  /** The values its argument may take, offered by shell completion. */
  argValues?: readonly string[];
  /** Needs neither the service nor its settings (gi version, gi completion): runs even when GI_URL is invalid. */
  standalone?: boolean;
  run(ctx: CommandContext, input: CommandInput): Promise<void>;
}

export const commandName = (spec: Pick<CommandSpec, 'path'>) => `gi ${spec.path.join(' ')}`;

/** "gi token create --bot B [--ttl SECONDS] [--label L]" */
export function usageLine(spec: Pick<CommandSpec, 'path' | 'args' | 'options'>): string {
  const args = spec.args.map((name) => `<${name}>`);
  const options = Object.entries(spec.options).map(([name, option]) => {
    const text = option.type === 'boolean' ? `--${name}` : `--${name} ${option.value ?? 'VALUE'}`;
    if (option.required) return text;
    return option.multiple ? `[${text} ...]` : `[${text}]`;
  });
  const required = options.filter((o) => !o.startsWith('['));
  const optional = options.filter((o) => o.startsWith('['));
  return [commandName(spec), ...args, ...required, ...optional].join(' ');
}
