import { usageLine, type CommandSpec, type OptionSpecs } from './command';
import { GLOBAL_OPTIONS } from './global-options';

import { SERVICE_NAMES, SERVICE_SUMMARIES } from './service-names';

function optionLines(options: OptionSpecs): string[] {
  const rows = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : ''}`;
    const notes = [o.required ? 'required' : '', o.multiple ? 'repeatable' : ''].filter(Boolean).join(', ');
    return [flag, notes ? `${o.description} (${notes})` : o.description];
  });
  const width = Math.max(...rows.map(([flag]) => flag.length));
  return rows.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`);
}

function commandList(commands: readonly CommandSpec[], includeServices: boolean): string[] {
  const rows: Array<[string, string]> = commands.map((c) => [c.path.join(' '), c.summary]);
  if (includeServices) rows.unshift(...SERVICE_NAMES.map((name): [string, string] => [name, SERVICE_SUMMARIES[name]]));
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`);
}

export function generalHelp(commands: readonly CommandSpec[]): string {
  return [
    'gi: the Generic Integration command line',
    '',
    'Usage: gi [--url URL] [--admin-token TOKEN] [--json] <command> [arguments] [options]',
    '',
    'Commands:',
    ...commandList(commands, true),
    '',
    'Global options (before or after the command):',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    "Run 'gi help <command>' or 'gi <command> --help' for a command's options.",
  ].join('\n');
}

export function commandHelp(spec: CommandSpec): string {
  const lines = [`Usage: ${usageLine(spec)}`, '', spec.summary];
  if (spec.details) lines.push('', spec.details);
  if (Object.keys(spec.options).length > 0) lines.push('', 'Options:', ...optionLines(spec.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  return lines.join('\n');
}

/** The help text of a topic (command words), or null when no command matches. */
export function helpFor(topic: string[], commands: readonly CommandSpec[]): string | null {
  if (topic.length === 0) return generalHelp(commands);
  const service = SERVICE_NAMES.find((name) => topic.length === 1 && topic[0] === name);
  if (service) return `Usage: gi ${service}\n\n${SERVICE_SUMMARIES[service]}.\nConfigured by environment variables: see the README's configuration table.`;
  const spec = commands.find((c) => c.path.length === topic.length && c.path.every((word, i) => topic[i] === word));
  if (spec) return commandHelp(spec);
  const group = commands.filter((c) => c.path.length > 1 && c.path[0] === topic[0]);
  if (topic.length === 1 && group.length > 0) {
    return [`Usage: gi ${topic[0]} <${group.map((c) => c.path[1]).join('|')}> ...`, '', 'Commands:', ...commandList(group, false), '', `Run 'gi help ${topic[0]} <command>' for its options.`].join('\n');
  }
  return null;
}
